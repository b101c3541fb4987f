package runtime

import "cmp"

// Settle applies the registry's run-time layers (the environment, then
// WithConfig) to cfg as given, before the defaults fill what no layer set.
func (r *Registry) Settle(cfg Config) Config {
	name := cmp.Or(cfg.Name, "default")
	cfg, _, _ = lay(cfg, 0, 0, []override{r.env[envName(name)], r.code[name]})
	return cfg
}
