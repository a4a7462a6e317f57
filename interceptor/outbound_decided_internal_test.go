package interceptor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"sort"
	"testing"

	sdkinterceptor "go.temporal.io/sdk/interceptor"
)

// What the guard does with an outbound method of the SDK.
const (
	// decidedGuarded: a call the guard admits, counts and observes.
	decidedGuarded = "guarded"
	// decidedTimer: the guard notes a timer exactly when the SDK writes a
	// StartTimer command, or reads results before the workflow waits.
	decidedTimer = "timer"
	// decidedHook: the guard acts on it for a reason other than the two
	// above (given with it).
	decidedHook = "hook"
	// decidedPasses: the guard passes it through untouched, for the
	// reason given with it.
	decidedPasses = "passes"
)

// outboundDecisions is every method of the SDK's
// interceptor.WorkflowOutboundInterceptor (SDK 1.50) with what the guard
// does with it and why.
var outboundDecisions = map[string]struct{ decision, why string }{
	"ExecuteActivity":      {decidedGuarded, "a tool or model call"},
	"ExecuteLocalActivity": {decidedGuarded, "a tool or model call"},
	"ExecuteChildWorkflow": {decidedGuarded, "a sub-agent"},

	"NewTimer":            {decidedTimer, "writes its StartTimer command itself (d > 0)"},
	"NewTimerWithOptions": {decidedTimer, "writes a StartTimer command (d > 0); Sleep and the Awaits reach it"},
	"Sleep":               {decidedPasses, "its timer, if the SDK writes one (d > 0), is the NewTimerWithOptions it calls"},
	"AwaitWithTimeout":    {decidedPasses, "its timer, if the SDK writes one, is the NewTimerWithOptions it calls"},
	"Await":               {decidedTimer, "reads results before the workflow waits; writes no timer"},
	"AwaitWithOptions":    {decidedPasses, "its timer, if the SDK writes one, is the NewTimerWithOptions it calls; it waits on nothing else the history shows"},

	"NewContinueAsNewError": {decidedPasses, "the state is carried when the workflow returns the error (carryOnReturn)"},
	"SetUpdateHandler":      {decidedHook, "warns when the workflow's handler replaces the guard's"},

	"ExecuteNexusOperation":         {decidedPasses, "not guarded (docs/guarantees.md): a Nexus operation writes no timer"},
	"RequestCancelNexusOperation":   {decidedPasses, "a cancellation, not a call"},
	"Go":                            {decidedPasses, "a coroutine writes no command"},
	"GetInfo":                       {decidedPasses, "a read"},
	"GetTypedSearchAttributes":      {decidedPasses, "a read"},
	"GetCurrentUpdateInfo":          {decidedPasses, "a read"},
	"GetLogger":                     {decidedPasses, "a read"},
	"GetMetricsHandler":             {decidedPasses, "a read"},
	"Now":                           {decidedPasses, "a read"},
	"IsReplaying":                   {decidedPasses, "a read"},
	"HasLastCompletionResult":       {decidedPasses, "a read"},
	"GetLastCompletionResult":       {decidedPasses, "a read"},
	"GetLastError":                  {decidedPasses, "a read"},
	"GetVersion":                    {decidedPasses, "a marker, neither a call nor a timer"},
	"GetSignalChannel":              {decidedPasses, "signals are taken in the inbound HandleSignal"},
	"GetSignalChannelWithOptions":   {decidedPasses, "signals are taken in the inbound HandleSignal"},
	"SetQueryHandler":               {decidedPasses, "queries write nothing"},
	"SetQueryHandlerWithOptions":    {decidedPasses, "queries write nothing"},
	"SideEffect":                    {decidedPasses, "a marker, not a call the agent makes"},
	"SideEffectWithOptions":         {decidedPasses, "a marker, not a call the agent makes"},
	"MutableSideEffect":             {decidedPasses, "a marker, not a call the agent makes"},
	"MutableSideEffectWithOptions":  {decidedPasses, "a marker, not a call the agent makes"},
	"RequestCancelExternalWorkflow": {decidedPasses, "a cancellation, not a call"},
	"SignalExternalWorkflow":        {decidedPasses, "a message, not a call (the guard's own echoes use it)"},
	"SignalChildWorkflow":           {decidedPasses, "a message to a sub-agent already counted"},
	"UpsertSearchAttributes":        {decidedPasses, "visibility, not a call"},
	"UpsertTypedSearchAttributes":   {decidedPasses, "visibility, not a call"},
	"UpsertMemo":                    {decidedPasses, "visibility, not a call"},

	"mustEmbedWorkflowOutboundInterceptorBase": {decidedPasses, "the SDK's marker that the base is embedded"},
}

// TestOutboundMethodsDecided fails when the SDK's outbound interceptor has
// a method the list above does not decide (an SDK upgrade added one: read
// whether it writes a call or a timer, then implement it in outbound.go or
// list it as passing through, with why), or lists one it no longer has;
// and checks outbound.go implements exactly the methods decided guarded,
// timer or hook.
func TestOutboundMethodsDecided(t *testing.T) {
	iface := reflect.TypeFor[sdkinterceptor.WorkflowOutboundInterceptor]()
	inSDK := map[string]bool{}
	for i := range iface.NumMethod() {
		name := iface.Method(i).Name
		inSDK[name] = true
		if _, ok := outboundDecisions[name]; !ok {
			t.Errorf("the SDK's WorkflowOutboundInterceptor has %s, which the guard passes through undecided: "+
				"if it writes a call or a timer, implement it in outbound.go (timers noted only when the SDK writes one, gated on a new guard version); "+
				"either way, add it to outboundDecisions with the decision and why", name)
		}
	}
	for name := range outboundDecisions {
		if !inSDK[name] {
			t.Errorf("outboundDecisions lists %s, which the SDK's WorkflowOutboundInterceptor no longer has", name)
		}
	}

	declared := outboundMethods(t, "outbound.go")
	var want []string
	for name, d := range outboundDecisions {
		if d.decision != decidedPasses {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	if !reflect.DeepEqual(declared, want) {
		t.Errorf("outbound.go implements %v; the decisions other than %q are %v", declared, decidedPasses, want)
	}
}

// outboundMethods lists the exported methods declared on *outbound in
// file, sorted.
func outboundMethods(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !fn.Name.IsExported() {
			continue
		}
		if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "outbound" {
				names = append(names, fn.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}
