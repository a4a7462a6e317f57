// Package judgehook hands package interceptor's judge to package
// interceptor/internal/judge without an import cycle: interceptor sets New
// when it is initialised; judge, which imports interceptor, gives what New
// returns its type. Nothing else uses it.
package judgehook

// New returns interceptor's judge of an execution under opts, an
// interceptor.Options.
var New func(opts any) (any, error)
