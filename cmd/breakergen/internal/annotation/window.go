package annotation

// WindowKeys are the name keys that need a window (the `window` key) for
// their name (SPEC §8).
var WindowKeys = []string{"failrate", "minimum", "slow", "slowrate"}

// CheckWindowKeys checks the keys given for the breaker name that need
// another key of that name: given maps each key to the option that gave
// it, invalid holds the keys given with a value that did not parse
// (errors already), so that no check takes the name for one without them.
// It returns the errors (a key of [WindowKeys] without a window) and the
// warnings, their messages starting "warning: " (a minimum above a count
// window, a slowrate without slow), each at its option's position. The
// generator checks a name's annotations with it, and `breakergen sim` a
// candidate.
func CheckWindowKeys(name string, given map[string]Option, invalid map[string]bool) (errs, warnings []*Error) {
	if w, ok := given["window"]; ok || invalid["window"] {
		if m, ok := given["minimum"]; ok && w.Value.Count > 0 && m.Value.Count > w.Value.Count {
			warnings = append(warnings, Errorf(m.Pos, "warning: minimum=%d of breaker %q is above window=%d, which holds at most %d calls: the rates apply once it holds %d; give minimum=%d or less", m.Value.Count, name, w.Value.Count, w.Value.Count, w.Value.Count, w.Value.Count))
		}
		if r, ok := given["slowrate"]; ok {
			if _, ok := given["slow"]; !ok && !invalid["slow"] {
				warnings = append(warnings, Errorf(r.Pos, "warning: slowrate of breaker %q has no effect without slow=D, the duration past which a call is slow; give slow=D too", name))
			}
		}
		return nil, warnings
	}
	for _, k := range WindowKeys {
		if o, ok := given[k]; ok {
			errs = append(errs, Errorf(o.Pos, "%s: breaker %q has no window to apply it to; give window=N (calls) or window=D (a duration) for it too", k, name))
		}
	}
	return errs, nil
}
