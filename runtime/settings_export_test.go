package runtime

// Settle applies the registry's run-time layers (the environment, then
// WithConfig) to cfg as given, before the defaults fill what no layer set.
func (r *Registry) Settle(cfg Config) Config { return r.settle(cfg) }
