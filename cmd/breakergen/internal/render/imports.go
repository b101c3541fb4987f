package render

import (
	"go/token"
	"go/types"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/breakergen/breakergen/cmd/breakergen/internal/model"
)

// RuntimePath is the import path of the runtime's user API, which generated
// code names in its constructors (registry, configs, fallbacks).
const RuntimePath = "github.com/breakergen/breakergen/runtime"

// ImplPath is the import path of the package generated code calls.
const ImplPath = "github.com/breakergen/breakergen/runtime/breakerimpl"

// imports assigns every imported package of one output file a name that is
// unique in the file and free in the destination package.
type imports struct {
	names map[string]string // path → name used in the file
	taken map[string]bool
}

var version = regexp.MustCompile(`^v[0-9]+$`)

func newImports(reserved map[string]bool) *imports {
	im := &imports{names: map[string]string{}, taken: map[string]bool{}}
	for n := range reserved {
		im.taken[n] = true
	}
	return im
}

// add gives path (whose package is called name) a name in the file.
func (im *imports) add(p, name string) string {
	if n, ok := im.names[p]; ok {
		return n
	}
	elems := strings.Split(p, "/")
	var cands []string
	cands = append(cands, name)
	last := elems[len(elems)-1]
	if version.MatchString(last) && last != name {
		cands = append(cands, name+last)
		elems = elems[:len(elems)-1]
	}
	if len(elems) > 1 && !strings.Contains(elems[len(elems)-2], ".") {
		cands = append(cands, sanitize(elems[len(elems)-2])+name)
	}
	cands = append(cands, name+"pkg")
	for _, c := range cands {
		if im.free(c) {
			return im.set(p, c)
		}
	}
	for i := 2; ; i++ {
		if c := name + strconv.Itoa(i); im.free(c) {
			return im.set(p, c)
		}
	}
}

func (im *imports) free(n string) bool {
	return n != "" && !im.taken[n] && !token.IsKeyword(n) && types.Universe.Lookup(n) == nil && n != "_"
}

func (im *imports) set(p, n string) string {
	im.names[p] = n
	im.taken[n] = true
	return n
}

func sanitize(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && sb.Len() > 0 {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// apply tells jennifer the names, aliasing only where the name is not what
// the path suggests.
func (im *imports) apply(f *jen.File) {
	paths := make([]string, 0, len(im.names))
	for p := range im.names {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		n := im.names[p]
		if n == path.Base(p) {
			f.ImportName(p, n)
		} else {
			f.ImportAlias(p, n)
		}
	}
}

// collect records every package named by t.
func (im *imports) collect(t types.Type, local *types.Package) {
	model.Walk(t, func(t types.Type) {
		if b, ok := t.(*types.Basic); ok && b.Kind() == types.UnsafePointer {
			im.add("unsafe", "unsafe")
		}
		if obj := model.TypeName(t); obj != nil && obj.Pkg() != nil && obj.Pkg().Path() != local.Path() {
			im.add(obj.Pkg().Path(), obj.Pkg().Name())
		}
	})
}
