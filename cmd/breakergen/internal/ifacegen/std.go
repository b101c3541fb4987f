package ifacegen

import "fmt"

// The standard library's types the fuzzer uses, each with a way to write
// a distinct value (v.n() numbers them) in the test file.
var (
	stdAny   = &named{name: "any", val: func(v *vctx, _ []typ) string { return fmt.Sprintf("any(%d)", v.n()) }}
	stdError = &named{name: "error", iface: &iface{methods: []*method{
		{name: "Error", ft: funcT{results: []typ{basicT{"string"}}}},
	}}, val: func(v *vctx, _ []typ) string { return fmt.Sprintf("%sNew(\"v%d\")", v.f.qual(pErrors), v.n()) }}
	stdTime = &named{pkg: pTime, name: "Time", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sUnix(%d, 0)", v.f.qual(pTime), v.n())
	}}
	stdDuration = &named{pkg: pTime, name: "Duration", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sDuration(%d)", v.f.qual(pTime), v.n())
	}}
	stdFrame = &named{pkg: pRuntime, name: "Frame", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sFrame{Line: %d}", v.f.qual(pRuntime), v.n())
	}}
	stdFileMode = &named{pkg: pFS, name: "FileMode", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sFileMode(%d)", v.f.qual(pFS), v.n())
	}}
	stdLevel = &named{pkg: pSlog, name: "Level", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sLevel(%d)", v.f.qual(pSlog), v.n())
	}}
	stdValues = &named{pkg: pURL, name: "Values", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("%sValues{\"k\": {\"v%d\"}}", v.f.qual(pURL), v.n())
	}}
	stdPointer = &named{pkg: pUnsafe, name: "Pointer", val: func(v *vctx, _ []typ) string {
		v.n()
		return fmt.Sprintf("%sPointer(new(int))", v.f.qual(pUnsafe))
	}}
	stdDirEntry = &named{pkg: pFS, name: "DirEntry", val: func(v *vctx, _ []typ) string {
		return fmt.Sprintf("fzDirEntry(%d)", v.n())
	}}
	// os.DirEntry is an alias of io/fs.DirEntry.
	stdOSDirEntry = &named{pkg: pOS, name: "DirEntry", alias: true, under: namedT{d: stdDirEntry}}
	stdWriter     = &named{pkg: pHTTP, name: "ResponseWriter", val: func(v *vctx, _ []typ) string {
		v.n()
		return v.f.qual(pHTTPTest) + "NewRecorder()"
	}}

	// Types used only through pointers: values are new(T).
	stdRequest   = &named{pkg: pHTTP, name: "Request"}
	stdResponse  = &named{pkg: pHTTP, name: "Response"}
	stdTText     = &named{pkg: pTText, name: "Template"}
	stdTHTML     = &named{pkg: pTHTML, name: "Template"}
	stdRand      = &named{pkg: pRand, name: "Rand"}
	stdRandV2    = &named{pkg: pRandV2, name: "Rand"}
	stdURL       = &named{pkg: pURL, name: "URL"}
	stdStrReader = &named{pkg: pStrings, name: "Reader"}

	// Interfaces, to embed and to pass.
	stdReader = &named{pkg: pIO, name: "Reader", iface: &iface{methods: []*method{
		{name: "Read", ft: funcT{params: []typ{sliceT{basicT{"byte"}}}, results: []typ{basicT{"int"}, namedT{d: stdError}}}, pnames: []string{"p"}, rnames: []string{"n", "err"}},
	}}, val: func(v *vctx, _ []typ) string { return fmt.Sprintf("%sNewReader(\"v%d\")", v.f.qual(pStrings), v.n()) }}
	stdWriterIO = &named{pkg: pIO, name: "Writer", iface: &iface{methods: []*method{
		{name: "Write", ft: funcT{params: []typ{sliceT{basicT{"byte"}}}, results: []typ{basicT{"int"}, namedT{d: stdError}}}, pnames: []string{"p"}, rnames: []string{"n", "err"}},
	}}}
	stdCloser = &named{pkg: pIO, name: "Closer", iface: &iface{methods: []*method{
		{name: "Close", ft: funcT{results: []typ{namedT{d: stdError}}}},
	}}}
	stdReadCloser = &named{pkg: pIO, name: "ReadCloser", iface: &iface{embeds: []typ{namedT{d: stdReader}, namedT{d: stdCloser}}},
		val: func(v *vctx, _ []typ) string {
			return fmt.Sprintf("%sNopCloser(%sNewReader(\"v%d\"))", v.f.qual(pIO), v.f.qual(pStrings), v.n())
		}}
	stdStringer = &named{pkg: pFmt, name: "Stringer", iface: &iface{methods: []*method{
		{name: "String", ft: funcT{results: []typ{basicT{"string"}}}},
	}}, val: func(v *vctx, _ []typ) string { return fmt.Sprintf("%sDuration(%d)", v.f.qual(pTime), v.n()) }}
	stdSort = &named{pkg: pSort, name: "Interface", iface: &iface{methods: []*method{
		{name: "Len", ft: funcT{results: []typ{basicT{"int"}}}},
		{name: "Less", ft: funcT{params: []typ{basicT{"int"}, basicT{"int"}}, results: []typ{basicT{"bool"}}}, pnames: []string{"i", "j"}},
		{name: "Swap", ft: funcT{params: []typ{basicT{"int"}, basicT{"int"}}}, pnames: []string{"i", "j"}},
	}}}
	stdHeap = &named{pkg: pHeap, name: "Interface", iface: &iface{embeds: []typ{namedT{d: stdSort}}, methods: []*method{
		{name: "Push", ft: funcT{params: []typ{namedT{d: stdAny}}}, pnames: []string{"x"}},
		{name: "Pop", ft: funcT{results: []typ{namedT{d: stdAny}}}},
	}}}
	stdFlagValue = &named{pkg: pFlag, name: "Value", iface: &iface{methods: []*method{
		{name: "String", ft: funcT{results: []typ{basicT{"string"}}}},
		{name: "Set", ft: funcT{params: []typ{basicT{"string"}}, results: []typ{namedT{d: stdError}}}},
	}}}
	stdHandler = &named{pkg: pHTTP, name: "Handler", iface: &iface{methods: []*method{
		{name: "ServeHTTP", ft: funcT{params: []typ{namedT{d: stdWriter}, ptrT{namedT{d: stdRequest}}}}},
	}}}
	stdRoundTripper = &named{pkg: pHTTP, name: "RoundTripper", iface: &iface{methods: []*method{
		{name: "RoundTrip", ft: funcT{params: []typ{ptrT{namedT{d: stdRequest}}}, results: []typ{ptrT{namedT{d: stdResponse}}, namedT{d: stdError}}}},
	}}}
	stdContext = &named{pkg: pContext, name: "Context", iface: &iface{methods: []*method{
		{name: "Deadline", ft: funcT{results: []typ{namedT{d: stdTime}, basicT{"bool"}}}, rnames: []string{"deadline", "ok"}},
		{name: "Done", ft: funcT{results: []typ{chanT{recvOnly, structT{}}}}},
		{name: "Err", ft: funcT{results: []typ{namedT{d: stdError}}}},
		{name: "Value", ft: funcT{params: []typ{namedT{d: stdAny}}, results: []typ{namedT{d: stdAny}}}, pnames: []string{"key"}},
	}}, val: func(v *vctx, _ []typ) string {
		c := v.f.qual(pContext)
		return fmt.Sprintf("%sWithValue(%sBackground(), fzKey{}, %d)", c, c, v.n())
	}}
	stdTextMarshaler = &named{pkg: pEncoding, name: "TextMarshaler", iface: &iface{methods: []*method{
		{name: "MarshalText", ft: funcT{results: []typ{sliceT{basicT{"byte"}}, namedT{d: stdError}}}, rnames: []string{"text", "err"}},
	}}}
)

// stdEmbeds are the standard library interfaces an interface may embed.
var stdEmbeds = []*named{stdReader, stdWriterIO, stdCloser, stdReadCloser, stdStringer, stdError, stdSort, stdHeap, stdFlagValue, stdHandler, stdRoundTripper, stdContext, stdTextMarshaler}

// stdValueTypes are the standard library types a parameter may have.
var stdValueTypes = []typ{
	namedT{d: stdTime}, namedT{d: stdDuration}, namedT{d: stdFrame}, namedT{d: stdFileMode},
	namedT{d: stdLevel}, namedT{d: stdValues}, namedT{d: stdPointer}, namedT{d: stdOSDirEntry},
	namedT{d: stdWriter}, ptrT{namedT{d: stdRequest}}, ptrT{namedT{d: stdResponse}},
	ptrT{namedT{d: stdTText}}, ptrT{namedT{d: stdTHTML}}, ptrT{namedT{d: stdRand}}, ptrT{namedT{d: stdRandV2}},
	ptrT{namedT{d: stdURL}}, namedT{d: stdReader}, namedT{d: stdReadCloser}, namedT{d: stdStringer},
	namedT{d: stdError}, namedT{d: stdAny}, namedT{d: stdContext},
}

// basics are the predeclared types a parameter may have, with a way to
// write a distinct value.
var basics = []string{"int", "string", "float64", "byte", "rune", "bool", "uint16", "int64", "complex128", "uintptr"}

func basicVal(name string, n int) string {
	switch name {
	case "string":
		return fmt.Sprintf("%q", fmt.Sprintf("v%d", n))
	case "float64":
		return fmt.Sprintf("float64(%d.5)", n)
	case "byte":
		return fmt.Sprintf("byte(%d)", n%256)
	case "bool":
		return fmt.Sprint(n%2 == 0)
	case "complex128":
		return fmt.Sprintf("complex(%d, 1)", n)
	}
	return fmt.Sprintf("%s(%d)", name, n)
}
