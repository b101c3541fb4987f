package runtime

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/breakergen/breakergen/internal/ratelimit"
	"github.com/breakergen/breakergen/internal/setting"
)

// override is one layer of run-time settings for a name: zero fields keep
// the lower layer's value.
type override struct {
	cfg   Config // Name unused
	rate  float64
	burst int
	// mode is the operator's mode a breaker of the name starts in
	// (BREAKER_<NAME>_MODE; Closed for none), and modeVar the variable
	// that says so, for the Event's reason.
	mode    State
	modeVar string
	// noFault is BREAKER_<NAME>_FAULT=0: no fault injection, whatever
	// the layer below gives (a zero Fault would keep it, and Config.Off
	// has no bit for it).
	noFault bool
}

// apply lays o over cfg: every field o sets replaces cfg's. WindowCalls and
// WindowPeriod are one setting: a layer that sets either replaces the
// lower layer's window, count or time.
func (o override) apply(cfg Config) Config {
	c := o.cfg
	// Off first, so that a field given beside its bit wins; the bits
	// stay for the layer below, but those of the fields given go.
	off := c.Off
	if off&SettingThreshold != 0 {
		cfg.FailureThreshold = 0
	}
	if off&SettingBackoff != 0 {
		cfg.ResetMax = 0
	}
	if off&SettingJitter != 0 {
		cfg.ResetJitter = 0
	}
	if off&SettingWindow != 0 {
		cfg.WindowCalls, cfg.WindowPeriod = 0, 0
	}
	if off&SettingSlowCall != 0 {
		cfg.SlowCall, cfg.SlowRate = 0, 0
	}
	if off&SettingInFlight != 0 {
		cfg.InFlight = 0
	}
	if off&SettingConcurrency != 0 {
		cfg.Concurrency = 0
	}
	if off&SettingThrottle != 0 {
		cfg.Throttle = 0
	}
	if o.noFault {
		cfg.Fault = 0
	}
	cfg.Off = (cfg.Off | off) &^ given(c)
	setGiven(&cfg.FailureThreshold, c.FailureThreshold)
	setGiven(&cfg.ResetTimeout, c.ResetTimeout)
	setGiven(&cfg.ResetMax, c.ResetMax)
	setGiven(&cfg.ResetJitter, c.ResetJitter)
	setGiven(&cfg.HalfOpenMax, c.HalfOpenMax)
	setGiven(&cfg.SuccessThreshold, c.SuccessThreshold)
	if c.WindowCalls > 0 || c.WindowPeriod > 0 {
		cfg.WindowCalls, cfg.WindowPeriod = max(c.WindowCalls, 0), max(c.WindowPeriod, 0)
	}
	setGiven(&cfg.FailureRate, c.FailureRate)
	setGiven(&cfg.MinimumCalls, c.MinimumCalls)
	setGiven(&cfg.SlowCall, c.SlowCall)
	setGiven(&cfg.SlowRate, c.SlowRate)
	setGiven(&cfg.InFlight, c.InFlight)
	setGiven(&cfg.Concurrency, c.Concurrency)
	setGiven(&cfg.Throttle, c.Throttle)
	setGiven(&cfg.Fault, c.Fault)
	if c.Latency > 0 {
		cfg.Latency, cfg.LatencyRate = c.Latency, c.LatencyRate // a latency alone is every call's
	} else if c.LatencyRate > 0 {
		cfg.LatencyRate = c.LatencyRate // the rate of the lower layer's latency
	}
	return cfg
}

// given returns the Setting bits of the fields c gives.
func given(c Config) Setting {
	var s Setting
	bit := func(b Setting, on bool) {
		if on {
			s |= b
		}
	}
	bit(SettingThreshold, c.FailureThreshold > 0)
	bit(SettingBackoff, c.ResetMax > 0)
	bit(SettingJitter, c.ResetJitter > 0)
	bit(SettingWindow, c.WindowCalls > 0 || c.WindowPeriod > 0)
	bit(SettingSlowCall, c.SlowCall > 0)
	bit(SettingInFlight, c.InFlight > 0)
	bit(SettingConcurrency, c.Concurrency > 0)
	bit(SettingThrottle, c.Throttle > 0)
	return s
}

// setGiven sets *dst to v when v is given: above zero (NaN is not).
func setGiven[T int | time.Duration | float64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// envName returns the name as it appears in environment variables: upper
// case, with '.', '-' and ':' as '_'. BREAKER_<envName>_THRESHOLD and its
// siblings override the breaker's settings.
func envName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', ':':
			return '_'
		}
		return r
	}, strings.ToUpper(name))
}

// WithConfig overrides the settings of the breakers named by each cfg's
// Name (exactly: "a-b" is not "a_b", though the two share environment
// variables), whatever the annotations say; zero fields keep the lower
// layer's value (the environment's, then the annotation's), except that
// WindowCalls and WindowPeriod are one setting: a cfg that sets either
// replaces the lower layer's window, so WindowPeriod: time.Minute turns an
// annotated window=100 into a one-minute window. Overrides take effect
// when a breaker is created. It is the highest layer: WithConfig, then the
// environment, then the annotation; of two WithConfig for one name, the
// later wins field by field. A cfg without a Name names no breaker: it is
// ignored, and NewRegistry logs a warning saying so.
func WithConfig(cfgs ...Config) Option {
	return func(r *Registry) {
		for i, c := range cfgs {
			if c.Name == "" {
				r.optWarns = append(r.optWarns, fmt.Sprintf("breaker: ignoring WithConfig's Config %d: it has no Name, so it overrides no breaker (%+v)", i, c))
				continue
			}
			o := r.code[c.Name]
			o.cfg = override{cfg: c}.apply(o.cfg)
			r.code[c.Name] = o
		}
	}
}

// WithRateLimit overrides the limiter of the breaker called name (exactly,
// as WithConfig's Name): rate tokens per second with the given burst. It
// may also limit a name that the annotations left unlimited. A rate that is not a positive, finite number
// (+Inf would lift the annotation's limit), or an empty name, is ignored,
// and NewRegistry logs a warning saying so.
func WithRateLimit(name string, rate float64, burst int) Option {
	return func(r *Registry) {
		if !(rate > 0) || math.IsInf(rate, 1) || name == "" {
			// +Inf would lift the annotation's limit, which no layer may
			// do by accident (UpdateRateLimit refuses it too).
			r.optWarns = append(r.optWarns, fmt.Sprintf("breaker: ignoring WithRateLimit(%q, %v, %d): want a breaker's name and a positive, finite number of tokens per second", name, rate, burst))
			return
		}
		o := r.code[name]
		o.rate, o.burst = rate, max(burst, 1)
		r.code[name] = o
	}
}

// WithoutEnv makes the registry ignore BREAKER_* environment variables
// (for tests).
func WithoutEnv() Option {
	return func(r *Registry) { r.noEnv = true }
}

// envWarned makes each malformed variable a single warning per process.
var envWarned sync.Map

// envSuffixes are the keys of BREAKER_<NAME>_<KEY>, one per name key of
// the annotations. No suffix ends another, so a name ending in one (a
// breaker called "x-slow") still reads right.
var envSuffixes = []string{
	"_THRESHOLD", "_RESET", "_HALFOPEN", "_SUCCESSES", "_RATELIMIT",
	"_WINDOW", "_FAILRATE", "_MINIMUM", "_SLOW", "_SLOWRATE", "_INFLIGHT",
	"_CONCURRENCY", "_THROTTLE", "_JITTER", "_MODE", "_FAULT", "_LATENCY",
}

// readEnv parses the BREAKER_<NAME>_<KEY> variables of environ. A malformed
// value or an unknown key is logged once as a warning naming the variable,
// and the lower layer's value stays; an empty value is no variable.
func (r *Registry) readEnv(environ []string) {
	suffixes := envSuffixes
	for _, kv := range environ {
		key, val, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(key, "BREAKER_")
		if !ok {
			continue
		}
		var name, suffix string
		for _, s := range suffixes {
			if n, ok := strings.CutSuffix(rest, s); ok && n != "" {
				name, suffix = n, s
				break
			}
		}
		if suffix != "" && strings.TrimSpace(val) == "" {
			continue // set to nothing, as scripts export a variable they leave empty: unset
		}
		var err error
		o := r.env[name]
		switch suffix {
		case "_THRESHOLD":
			o.cfg.FailureThreshold, err = positiveInt(val)
		case "_HALFOPEN":
			o.cfg.HalfOpenMax, err = positiveInt(val)
		case "_SUCCESSES":
			o.cfg.SuccessThreshold, err = positiveInt(val)
		case "_RESET":
			o.cfg.ResetTimeout, o.cfg.ResetMax, err = setting.Reset(val, seconds)
		case "_JITTER":
			// 0% is given too: it turns a lower layer's jitter off, which
			// a zero ResetJitter alone would keep.
			if o.cfg.ResetJitter, err = setting.Jitter(val, true); err == nil {
				o.cfg.Off &^= SettingJitter
				if o.cfg.ResetJitter == 0 {
					o.cfg.Off |= SettingJitter
				}
			}
		case "_MODE":
			switch strings.ToLower(strings.TrimSpace(val)) {
			case "isolate":
				o.mode, o.modeVar = Isolated, kv
			case "bypass":
				o.mode, o.modeVar = Bypassed, kv
			default:
				err = errors.New("want isolate or bypass")
			}
		case "_RATELIMIT":
			o.rate, o.burst, err = ratelimit.Parse(val)
		case "_WINDOW":
			var n int
			var d time.Duration
			switch n, d, err = setting.Window(val); {
			case err == nil && n > setting.MaxWindowCalls:
				// The runtime would keep the largest instead, without a word.
				err = fmt.Errorf("above the largest count window, %d calls; for a longer memory give a time window, like 10m", setting.MaxWindowCalls)
			case err == nil:
				o.cfg.WindowCalls, o.cfg.WindowPeriod = n, d
			}
		case "_FAILRATE":
			o.cfg.FailureRate, err = setting.Percent(val, true)
		case "_MINIMUM":
			o.cfg.MinimumCalls, err = positiveInt(val)
		case "_SLOW":
			o.cfg.SlowCall, err = seconds(val)
		case "_SLOWRATE":
			o.cfg.SlowRate, err = setting.Percent(val, true)
		case "_INFLIGHT":
			o.cfg.InFlight, err = seconds(val)
		case "_CONCURRENCY":
			o.cfg.Concurrency, err = positiveInt(val)
		case "_THROTTLE":
			o.cfg.Throttle, err = setting.Throttle(val)
		case "_FAULT":
			// 0 is given too, as for _JITTER: no fault injection.
			if o.cfg.Fault, err = faultValue(val); err == nil {
				o.noFault = o.cfg.Fault == 0
			}
		case "_LATENCY":
			o.cfg.Latency, o.cfg.LatencyRate, err = latencyValue(val)
		default:
			err = fmt.Errorf("unknown setting; want one of %s", strings.Join(suffixes, ", "))
		}
		if err == nil && envName(name) != name {
			// No breaker's name maps to it (BREAKER_eastmoney_THRESHOLD):
			// it would be ignored without a word.
			err = fmt.Errorf("NAME is written in upper case, with _ for '.', '-' and ':'; want BREAKER_%s%s", envName(name), suffix)
		}
		if err != nil {
			if _, dup := envWarned.LoadOrStore(kv, true); !dup {
				r.log().Warn(fmt.Sprintf("breaker: ignoring %s=%q: %v", key, val, err), "variable", key)
			}
			continue
		}
		r.env[name] = o
	}
}

func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a whole number >= 1")
	}
	return n, nil
}

// seconds parses a Go duration ("120s", "2m") or a plain number of seconds
// ("120", "1.5"), as the origin story's *_COOLDOWN_SEC variables are written.
// A number of seconds below a nanosecond is malformed: as a zero Duration it
// would mean "not given", and the variable would be ignored without a word.
func seconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1e9 {
		if d := time.Duration(f * float64(time.Second)); d > 0 {
			return d, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 1e9 {
			return 0, fmt.Errorf("%s seconds is too long: want a duration such as 120s, or seconds", s)
		}
		return 0, fmt.Errorf("want a positive duration such as 120s, or seconds")
	}
	return d, nil
}

// settings are the final settings of one name: what its breaker and its
// limiter are made with.
type settings struct {
	cfg   Config  // with defaults applied
	rate  float64 // the limiter's tokens per second; +Inf for no limit
	burst int     // the limiter's burst, at least 1
}

// limited reports whether the settings give the name a rate limit.
func (s settings) limited() bool { return !math.IsInf(s.rate, 1) }

// resolve is the one step from the layers of settings to the final ones:
// cfg, rate and burst are the lowest layer (the annotation's, as given),
// and layers are laid over them in order, lowest first (the environment,
// then WithConfig and WithRateLimit). Defaults come last, so that a field
// no layer gives stays "not given" until then (with a window, a
// FailureThreshold that no layer gives means none). It is pure: same
// layers, same settings.
func resolve(cfg Config, rate float64, burst int, layers ...override) settings {
	cfg, rate, burst = lay(cfg, rate, burst, layers)
	rate, burst = normRate(rate, burst)
	return settings{cfg: cfg.withDefaults(), rate: rate, burst: burst}
}

// lay is the first half of resolve: the layers laid over the lowest one,
// every field that a layer gives replacing the one below, and no default.
func lay(cfg Config, rate float64, burst int, layers []override) (Config, float64, int) {
	for _, o := range layers {
		cfg = o.apply(cfg)
		if o.rate > 0 {
			rate, burst = o.rate, o.burst
		}
	}
	return cfg, rate, burst
}

// normRate returns a limiter's settings as it keeps them: a rate that is
// not a positive number means no limit (+Inf), a burst below 1 is 1.
func normRate(rate float64, burst int) (float64, int) {
	if math.IsNaN(rate) || rate <= 0 {
		rate = math.Inf(1)
	}
	return rate, max(burst, 1)
}

// settings returns the final settings of the breaker and limiter named by
// cfg.Name ("default" when empty), from the annotation's cfg, rate and
// burst and the registry's run-time layers.
func (r *Registry) settings(cfg Config, rate float64, burst int) settings {
	cfg.Name = cmp.Or(cfg.Name, "default")
	return r.settingsOf(cfg.Name, cfg, rate, burst)
}

// warnWindowless warns, once a variable, of the environment's settings of
// a window that the breaker or family called name, made with no window
// from any layer, cannot use: without the warning they would do nothing
// without a word (Update refuses them; an annotation is an error). It is
// called where a breaker or family is made, not where settings are
// resolved: a later call for a made breaker gets it as it was made.
func (r *Registry) warnWindowless(name string) {
	o := r.env[envName(name)]
	for _, v := range []struct {
		set    bool
		suffix string
	}{
		{o.cfg.FailureRate > 0, "_FAILRATE"}, {o.cfg.MinimumCalls > 0, "_MINIMUM"},
		{o.cfg.SlowCall > 0, "_SLOW"}, {o.cfg.SlowRate > 0, "_SLOWRATE"},
	} {
		if !v.set {
			continue
		}
		key := "BREAKER_" + envName(name) + v.suffix
		if _, dup := envWarned.LoadOrStore(key+" windowless", true); !dup {
			r.log().Warn(fmt.Sprintf("breaker: ignoring %s: breaker %q has no window (set BREAKER_%s_WINDOW, or window= in its annotation)", key, name, envName(name)), "variable", key)
		}
	}
}

// settingsOf is settings with the layers of the breaker called name: the
// code's by that name exactly, the environment's by its envName (which
// "a-b" and "a_b" share, as SPEC §5 says of the variables alone).
func (r *Registry) settingsOf(name string, cfg Config, rate float64, burst int) settings {
	layers := []override{r.env[envName(name)], r.code[name]}
	s := resolve(cfg, rate, burst, layers...)
	if s.cfg.cutMaybe() && !r.exists(name) { // one made already keeps its settings, and warned of them
		given, _, _ := lay(cfg, rate, burst, layers)
		r.warnCut(name, given)
	}
	return s
}

// exists reports whether the registry has a breaker or a family called name.
func (r *Registry) exists(name string) bool {
	if _, ok := r.Lookup(name); ok {
		return true
	}
	return len(r.familiesNamed(name)) > 0
}

// cutMaybe reports whether c, made by withDefaults, may hold a value cut
// to its bound: a reset of MaxCooldown or a fraction of 1 (which warnCut
// then tells from a value given as such).
func (c Config) cutMaybe() bool {
	return c.ResetTimeout == MaxCooldown || c.ResetMax == MaxCooldown ||
		c.FailureRate == 1 || c.SlowRate == 1 || c.ResetJitter == 1 || c.Fault == 1 || c.LatencyRate == 1
}

// warnCut warns, once a field of each name, of a value in given, the
// settings of the breaker called name before defaults, that the breaker
// is made without (Config.withDefaults):
//   - a ResetTimeout or ResetMax above MaxCooldown, cut to it, since a
//     fleet's peers ignore a longer OPEN period;
//   - a fraction above 1 (FailureRate, SlowRate, ResetJitter, Fault,
//     LatencyRate), made 1: most often a percentage (50 for 0.5), where
//     a FailureRate of 1 trips only when every call fails and a Fault of
//     1 fails every call.
//
// Update refuses such values, the environment's are refused by name and
// the annotation's are generate-time errors; a Config given in code has
// no error to return, so it is cut, and said to be.
func (r *Registry) warnCut(name string, given Config) {
	for _, f := range [...]struct {
		field string
		d     time.Duration
	}{{"ResetTimeout", given.ResetTimeout}, {"ResetMax", given.ResetMax}} {
		if f.d > MaxCooldown && r.warnOnce("long reset", name+" "+f.field) {
			r.log().Warn(fmt.Sprintf("breaker[%s]: %s %s is above %s, the longest OPEN period (MaxCooldown); using %s", name, f.field, f.d, MaxCooldown, MaxCooldown),
				"breaker", name, "field", f.field)
		}
	}
	for _, f := range [...]struct {
		field string
		x     float64
	}{
		{"FailureRate", given.FailureRate}, {"SlowRate", given.SlowRate}, {"ResetJitter", given.ResetJitter},
		{"Fault", given.Fault}, {"LatencyRate", given.LatencyRate},
	} {
		if f.x > 1 && r.warnOnce("fraction above 1", name+" "+f.field) {
			r.log().Warn(fmt.Sprintf("breaker[%s]: %s %v is above 1 (a fraction: 0.5 for 50%%); using 1", name, f.field, f.x),
				"breaker", name, "field", f.field)
		}
	}
}

// environ is replaced in tests.
var environ = os.Environ

// familyLayers returns the settings of a family made with cfg (the
// annotation's) as its run-time layers give them, before defaults (what a
// key's own layers lay over), and whether any layer may name one of its
// keys, "<family>/<key>": WithConfig or WithRateLimit by that name, or
// BREAKER_<FAMILY>/<KEY>_*. The registry's layers are fixed once it is
// made, so a family without such a layer never looks for one.
func (r *Registry) familyLayers(cfg Config) (given Config, keyLayers bool) {
	cfg.Name = cmp.Or(cfg.Name, "default")
	given, _, _ = lay(cfg, 0, 0, []override{r.env[envName(cfg.Name)], r.code[cfg.Name]})
	for n := range r.code {
		keyLayers = keyLayers || strings.HasPrefix(n, cfg.Name+"/")
	}
	for n := range r.env {
		keyLayers = keyLayers || strings.HasPrefix(n, envName(cfg.Name)+"/")
	}
	return given, keyLayers
}

// keyConfig returns the settings of a new breaker of the family's key
// called name: the family's settings (cfg) with the key's own run-time
// layers, its BREAKER_<NAME>_* variables and then its WithConfig, laid
// over the family's settings as given (f.given) as resolve lays every
// name's, defaults last, so that a key's own settings mean what they mean
// for any breaker (its window alone leaves the threshold to the family's,
// if the family gave one). cfg itself when the key has none. It is called
// each time the key's breaker is made, so a key dropped and made again
// gets them again. A key's own rate limit cannot apply: the family's keys
// share its limiter; it is logged once as a warning, by name.
func (f *Family) keyConfig(name string, cfg Config) Config {
	r := f.reg
	env, code := r.envOf(name), r.code[name]
	if (env.rate > 0 || code.rate > 0) && r.warnOnce("key rate", name) {
		r.log().Warn(fmt.Sprintf("breaker[%s]: ignoring its own rate limit (BREAKER_%s_RATELIMIT or WithRateLimit): the keys of family %q share the family's limiter; set it by the family's name", name, envName(name), f.name),
			"breaker", name, "family", f.name)
	}
	if env.cfg == (Config{}) && !env.noFault && code.cfg == (Config{}) && !code.noFault {
		return cfg
	}
	cfg = resolve(*f.given.Load(), 0, 0, env, code).cfg
	if cfg.cutMaybe() {
		// The key's own values alone: the family's were warned of by
		// its name.
		own, _, _ := lay(Config{}, 0, 0, []override{env, code})
		r.warnCut(name, own)
	}
	if e := env.cfg; !cfg.windowed() && (e.FailureRate > 0 || e.MinimumCalls > 0 || e.SlowCall > 0 || e.SlowRate > 0) {
		r.warnWindowless(name)
	}
	return cfg
}

// ownOver returns cfg, the settings of the live breaker of the family's
// key called name as an Update of the family leaves them, with the key's
// own layers (its BREAKER_<NAME>_* variables, then its WithConfig) laid
// over them again, defaults last: a key's own setting wins over its
// family's, on its live breaker as on one made after the Update
// (keyConfig). cfg itself for a key with none.
func (f *Family) ownOver(name string, cfg Config) Config {
	if !f.keyLayers {
		return cfg
	}
	env, code := f.reg.envOf(name), f.reg.code[name]
	if env.cfg == (Config{}) && !env.noFault && code.cfg == (Config{}) && !code.noFault {
		return cfg
	}
	cfg, _, _ = lay(cfg, 0, 0, []override{env, code})
	return cfg.withDefaults()
}

// envOf returns the environment's layer of the breaker called name,
// r.env[envName(name)], without allocating for a name of up to 64 ASCII
// bytes (a new key's, on the path that makes it).
func (r *Registry) envOf(name string) override {
	var buf [64]byte
	if len(name) > len(buf) {
		return r.env[envName(name)]
	}
	for i := range len(name) {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return r.env[envName(name)] // strings.ToUpper's rules
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case c == '.' || c == '-' || c == ':':
			c = '_'
		}
		buf[i] = c
	}
	return r.env[string(buf[:len(name)])]
}
