package model

import (
	"go/token"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// fieldNames names the wrapper's route fields after their breakers,
// avoiding the wrapper's methods, next and keywords.
func (b *builder) fieldNames(in *Interface) {
	taken := map[string]bool{}
	for _, m := range in.Methods {
		taken[m.Name] = true
	}
	// The wrapped value's field: next, unless a method has that name.
	in.NextField = "next"
	for i := 2; taken[in.NextField]; i++ {
		in.NextField = "next" + strconv.Itoa(i)
	}
	taken[in.NextField] = true
	for _, r := range in.Routes {
		if f := r.Family; f != nil && f.Field != "" {
			r.Field = f.Field // the family's other routes share its field
			continue
		}
		base := ident(r.Name)
		cand := base
		if taken[cand] || token.IsKeyword(cand) {
			if r.Method != "" {
				cand = base + upperFirst(r.Method)
			}
			for i := 2; taken[cand] || token.IsKeyword(cand); i++ {
				cand = base + strconv.Itoa(i)
			}
		}
		taken[cand] = true
		r.Field = cand
		if r.Family != nil {
			r.Family.Field = cand
		}
	}
	fresh := func(want string) string {
		cand := want
		for i := 2; taken[cand] || token.IsKeyword(cand); i++ {
			cand = want + strconv.Itoa(i)
		}
		taken[cand] = true
		return cand
	}
	// The chain's own fields: the primary X, the fallbacks, and per route
	// the fallbacks' routes.
	if in.Chain {
		in.PrimaryField = fresh("primary")
		in.FallbacksField = fresh("fallbacks")
		for _, r := range in.Routes {
			r.FallbackField = fresh(r.Field + "Fallbacks")
		}
	}
	// The per-method try helpers, tryM, and stale caches, mStale.
	for _, m := range in.Methods {
		if m.Route == nil {
			continue
		}
		m.Try = fresh("try" + upperFirst(m.Name))
		if m.Route.Stale > 0 {
			m.StaleField = fresh(lowerFirst(m.Name) + "Stale")
		}
	}
}

// ident makes a breaker name an identifier: "fallback:sina" → fallbackSina.
func ident(name string) string {
	var sb strings.Builder
	up := false
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = sb.Len() > 0
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	if s == "" || unicode.IsDigit(rune(s[0])) {
		s = "b" + s
	}
	return s
}

// lowerFirst and upperFirst change the case of s's first rune (not its
// first byte: an identifier may start with ý or Ü).
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
