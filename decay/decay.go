// Package decay computes recency weights.
package decay

// Config is the recency-decay configuration.
type Config struct{}
