package schedule_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/loopguard/loopguard/interceptor"
	"github.com/loopguard/loopguard/worker/e2e/schedule"
)

// The generator's own tests: no server needed.

func mustFeatures(t *testing.T, s string) schedule.Features {
	t.Helper()
	fs, err := schedule.ParseFeatures(s)
	require.NoError(t, err)
	return fs
}

// featureSets are base, all, and each feature alone with what it builds on.
func featureSets(t *testing.T) map[string]schedule.Features {
	sets := map[string]schedule.Features{"base": mustFeatures(t, "base"), "all": mustFeatures(t, "all")}
	for _, f := range schedule.AllFeatures {
		s := string(f)
		switch f {
		case schedule.FeatSelectChild:
			s += ",select,child"
		case schedule.FeatInflight:
			s += ",can"
		case schedule.FeatGuidance:
			s += ",updates"
		case schedule.FeatLongPause:
			s += ",runtime"
		}
		sets[s] = mustFeatures(t, s)
	}
	return sets
}

func TestGenerateIsReproducible(t *testing.T) {
	for name, fs := range featureSets(t) {
		for seed := int64(0); seed < 100; seed++ {
			a, b := schedule.Generate(seed, fs), schedule.Generate(seed, fs)
			require.Equal(t, a, b, "features %s seed %d: same seed, same plan", name, seed)
			back, err := schedule.ParsePlan(a.JSON())
			require.NoError(t, err)
			require.Equal(t, a, back, "features %s seed %d: the printed plan reads back as itself", name, seed)
		}
	}
}

func TestSeedsGiveDifferentPlans(t *testing.T) {
	fs := mustFeatures(t, "all")
	seen := map[string]int64{}
	for seed := int64(0); seed < 200; seed++ {
		p := schedule.Generate(seed, fs)
		p.Seed = 0
		key := p.JSON()
		if other, dup := seen[key]; dup {
			t.Fatalf("seeds %d and %d give the same plan", other, seed)
		}
		seen[key] = seed
	}
}

func TestGeneratedPlansAreValidAndUseOnlyTheirFeatures(t *testing.T) {
	for name, fs := range featureSets(t) {
		used := schedule.Features{}
		for seed := int64(0); seed < 500; seed++ {
			p := schedule.Generate(seed, fs)
			require.NoError(t, p.Validate(fs), "features %s seed %d: %s", name, seed, p.JSON())
			require.Equal(t, fs.String(), p.Features)
			require.Positive(t, p.Calls(), "seed %d: a plan makes calls", seed)
			for f := range p.Uses() {
				require.True(t, fs.Has(f), "features %s seed %d uses %s: %s", name, seed, f, p.JSON())
				used[f] = true
			}
		}
		for f := range fs {
			if f == schedule.FeatDrift {
				continue
			}
			assert.True(t, used[f], "features %s: no plan of 500 used %s", name, f)
		}
	}
}

func TestValidateRejectsBrokenPlans(t *testing.T) {
	all := mustFeatures(t, "all")
	act := func(tag string) schedule.Step {
		return schedule.Step{Call: &schedule.Call{Kind: schedule.KindActivity, Node: "Code", Tag: tag}}
	}
	base := func() schedule.Plan {
		return schedule.Plan{Profile: schedule.ProfileDefault, Runs: [][]schedule.Step{{act("t1")}}, Answers: []schedule.Answer{schedule.AnswerResume}}
	}
	tests := []struct {
		name string
		give func(p *schedule.Plan)
		fs   schedule.Features
		want string
	}{
		{"no runs", func(p *schedule.Plan) { p.Runs = nil }, all, "no runs"},
		{"empty run", func(p *schedule.Plan) { p.Runs = append(p.Runs, nil) }, all, "runs[1]: no steps"},
		{"two runs without can", func(p *schedule.Plan) { p.Runs = append(p.Runs, []schedule.Step{act("t2")}) }, schedule.Features{}, "need feature can"},
		{"duplicate tag", func(p *schedule.Plan) { p.Runs[0] = append(p.Runs[0], act("t1")) }, all, `tag "t1"`},
		{"unknown node", func(p *schedule.Plan) { p.Runs[0][0].Call.Node = "Lint" }, all, `not a "activity" node`},
		{"two fields set", func(p *schedule.Plan) { p.Runs[0][0].SleepMs = 5 }, all, "2 fields set"},
		{"parallel without the feature", func(p *schedule.Plan) {
			p.Runs[0] = append(p.Runs[0], schedule.Step{Parallel: [][]schedule.Step{{act("t2")}, {act("t3")}}})
		}, schedule.Features{}, "needs feature parallel"},
		{"one branch", func(p *schedule.Plan) {
			p.Runs[0] = append(p.Runs[0], schedule.Step{Parallel: [][]schedule.Step{{act("t2")}}})
		}, all, "1 branches"},
		{"too many picks", func(p *schedule.Plan) {
			p.Runs[0] = append(p.Runs[0], schedule.Step{Select: &schedule.Select{Calls: []schedule.Call{*act("t2").Call}, Picks: 2}})
		}, all, "2 picks"},
		{"grandchild", func(p *schedule.Plan) {
			inner := schedule.Call{Kind: schedule.KindChild, Node: "Reviewer", Tag: "t3", Child: []schedule.Step{act("t4")}}
			p.Runs[0] = append(p.Runs[0], schedule.Step{Call: &schedule.Call{Kind: schedule.KindChild, Node: "SubAgent", Tag: "t2", Child: []schedule.Step{{Call: &inner}}}})
		}, all, "calls activities only"},
		{"child in a select without selectchild", func(p *schedule.Plan) {
			ch := schedule.Call{Kind: schedule.KindChild, Node: "Reviewer", Tag: "t2", Child: []schedule.Step{act("t3")}}
			p.Runs[0] = append(p.Runs[0], schedule.Step{Select: &schedule.Select{Calls: []schedule.Call{ch}, Picks: 1}})
		}, mustFeatures(t, "select,child"), "needs feature selectchild"},
		{"escalate without the feature", func(p *schedule.Plan) { p.Answers = []schedule.Answer{schedule.AnswerEscalate} }, schedule.Features{}, "needs feature escalate"},
		{"unknown answer", func(p *schedule.Plan) { p.Answers = []schedule.Answer{"shrug"} }, all, `unknown answer "shrug"`},
		{"guidance without the feature", func(p *schedule.Plan) { p.Answers = []schedule.Answer{schedule.AnswerGuidance} }, schedule.Features{}, "needs feature guidance"},
		{"guidance update without updates", func(p *schedule.Plan) { p.Answers = []schedule.Answer{schedule.AnswerGuidanceUpdate} }, mustFeatures(t, "guidance"), "needs feature updates"},
		{"handlers without the feature", func(p *schedule.Plan) { p.Handlers = []schedule.HandlerKind{schedule.HandlerReview} }, schedule.Features{}, "needs feature handler"},
		{"unknown handler kind", func(p *schedule.Plan) { p.Handlers = []schedule.HandlerKind{"shrug"} }, all, `unknown handler kind "shrug"`},
		{"slow handler without runtime", func(p *schedule.Plan) { p.Handlers = []schedule.HandlerKind{schedule.HandlerSlow} }, mustFeatures(t, "handler"), "needs feature runtime"},
		{"runtime without the feature", func(p *schedule.Plan) { p.Runtime = true }, schedule.Features{}, "needs feature runtime"},
		{"liveness without the feature", func(p *schedule.Plan) { p.Liveness = &schedule.Liveness{} }, schedule.Features{}, "needs feature stuck"},
		{"too many warnings", func(p *schedule.Plan) { p.Liveness = &schedule.Liveness{Warnings: 13} }, all, "warnings 13 outside 0..12"},
		{"stuck loop without liveness", func(p *schedule.Plan) { p.Runs[0] = append(p.Runs[0], stuckStep("t2", "Code", 1)) }, all, "without liveness"},
		{"stuck loop not last", func(p *schedule.Plan) {
			p.Liveness = &schedule.Liveness{}
			p.Runs[0] = []schedule.Step{stuckStep("t2", "Code", 1), act("t1")}
		}, all, "the last step of the last run"},
		{"stuck loop of Verify", func(p *schedule.Plan) {
			p.Liveness = &schedule.Liveness{}
			p.Runs[0] = append(p.Runs[0], stuckStep("t2", "Verify", 1))
		}, all, `of "Verify"`},
		{"stuck group too wide", func(p *schedule.Plan) {
			p.Liveness = &schedule.Liveness{}
			p.Runs[0] = append(p.Runs[0], stuckStep("t2", "Code", schedule.MaxGroupWidth+1))
		}, all, "width 5 outside"},
		{"stuck group tag with a dot", func(p *schedule.Plan) {
			p.Liveness = &schedule.Liveness{}
			p.Runs[0] = append(p.Runs[0], stuckStep("t2.x", "Code", 1))
		}, all, "has a dot"},
		{"long pause without the feature", func(p *schedule.Plan) { p.LongPause = schedule.LongPauseEscalate }, schedule.Features{}, "needs feature longpause"},
		{"unknown long pause", func(p *schedule.Plan) { p.LongPause = "nap" }, all, `unknown long pause "nap"`},
		{"cleanup of a child", func(p *schedule.Plan) {
			p.Cleanup = []schedule.Step{{Call: &schedule.Call{Kind: schedule.KindChild, Node: "Reviewer", Tag: "t2", Child: []schedule.Step{act("t3")}}}}
		}, all, "activity calls only"},
		{"slow-escalate handler without longpause", func(p *schedule.Plan) { p.Handlers = []schedule.HandlerKind{schedule.HandlerSlowEscalate} }, mustFeatures(t, "handler,runtime"), "needs feature longpause"},
		{"input past the last call", func(p *schedule.Plan) { p.Inputs = []schedule.Input{{AtCall: 2, Kind: schedule.InputHalt}} }, all, "atCall 2 outside 0..1"},
		{"unknown bad payload", func(p *schedule.Plan) {
			p.Inputs = []schedule.Input{{Kind: schedule.InputBadSignal, Name: "resume", Bad: "nice"}}
		}, all, `unknown bad payload "nice"`},
		{"policy profile without the feature", func(p *schedule.Plan) { p.Profile = schedule.ProfileFail }, schedule.Features{}, "needs feature policy"},
		{"unknown profile", func(p *schedule.Plan) { p.Profile = "lax" }, all, `profile "lax" is unknown`},
	}
	require.NoError(t, base().Validate(schedule.Features{}), "the base plan is valid")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			tt.give(&p)
			err := p.Validate(tt.fs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// stuckStep is a stuck loop of one group of width calls of node.
func stuckStep(tag, node string, width int) schedule.Step {
	return schedule.Step{Stuck: &schedule.Stuck{Rounds: 3, Round: []schedule.Group{{Call: schedule.Call{Kind: schedule.KindActivity, Node: node, Tag: tag}, Width: width}}}}
}

func TestParseFeatures(t *testing.T) {
	tests := []struct {
		give, want string
		err        bool
	}{
		{give: "", want: "base"},
		{give: "base", want: "base"},
		{give: "codec, parallel", want: "parallel,codec"},
		{give: "all,-codec,-drift", want: "parallel,local,child,timer,select,selectchild,can,inflight,escalate,updates,halt,bad,cancel,terminate,nonfinite,ownsignal,starthalt,handler,guidance,runtime,stuck,longpause,policy"},
		{give: "parallel,paralel", err: true},
	}
	for _, tt := range tests {
		fs, err := schedule.ParseFeatures(tt.give)
		if tt.err {
			assert.Error(t, err, tt.give)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.want, fs.String(), tt.give)
	}
}

// Every Options field but the hooks is drifted, to a valid value that
// differs from the recorded one in that field.
func TestDriftsChangeEveryField(t *testing.T) {
	typ := reflect.TypeFor[interceptor.Options]()
	funcs := 0
	for i := 0; i < typ.NumField(); i++ {
		if typ.Field(i).Type.Kind() == reflect.Func {
			funcs++
		}
	}
	fields := schedule.DriftFields()
	require.Len(t, fields, typ.NumField()-funcs, "every non-hook field is drifted")
	require.NotContains(t, fields, "NodeName")

	profiles := map[string]func() interceptor.Options{}
	for name, mk := range schedule.Profiles {
		profiles[name] = mk
		profiles[name+"+runtime"] = func() interceptor.Options { return schedule.WithRuntimeBudget(mk()) }
		profiles[name+"+liveness"] = func() interceptor.Options { return schedule.WithLiveness(mk(), schedule.MaxStuckWarnings) }
	}
	for name, mk := range profiles {
		base := mk()
		drifts, err := schedule.Drifts(base)
		require.NoError(t, err, name)
		byField := map[string]bool{}
		for _, d := range drifts {
			_, err := interceptor.New(d.Options)
			require.NoError(t, err, "%s: drift %s is valid", name, d.Field)
			byField[d.Field] = true
			if d.Field == "*" {
				for _, f := range fields {
					assert.False(t, reflect.DeepEqual(field(base, f), field(d.Options, f)), "%s: the all-at-once drift changes %s", name, f)
				}
				continue
			}
			f, removed := strings.CutSuffix(d.Field, "=removed")
			assert.False(t, reflect.DeepEqual(field(base, f), field(d.Options, f)), "%s: drift %s changes it", name, d.Field)
			if removed {
				assert.True(t, reflect.ValueOf(d.Options).FieldByName(f).IsZero(), "%s: %s removed", name, f)
			}
			for _, other := range fields {
				if other != f && other != "Window" {
					assert.Equal(t, field(base, other), field(d.Options, other), "%s: drift %s leaves %s alone", name, d.Field, other)
				}
			}
		}
		for _, f := range fields {
			assert.True(t, byField[f], "%s: %s drifted", name, f)
			if !reflect.ValueOf(base).FieldByName(f).IsZero() {
				assert.True(t, byField[f+"=removed"], "%s: %s removed", name, f)
			}
		}
		assert.True(t, byField["*"])
	}
}

func field(o interceptor.Options, name string) any {
	return reflect.ValueOf(o).FieldByName(name).Interface()
}

func TestCodecEncryptsAndRoundTrips(t *testing.T) {
	dc := schedule.DataConverter()
	in := map[string]string{"reason": "secret-reason"}
	p, err := dc.ToPayload(in)
	require.NoError(t, err)
	assert.Equal(t, schedule.EncryptedEncoding, string(p.GetMetadata()[converter.MetadataEncoding]))
	assert.NotContains(t, string(p.GetData()), "secret-reason")
	assert.NotContains(t, string(p.GetData()), "json/plain")
	var out map[string]string
	require.NoError(t, dc.FromPayload(p, &out))
	assert.Equal(t, in, out)

	plain := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte("json/plain")}, Data: []byte(`{"a":"b"}`)}
	dec, err := schedule.Codec{}.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	assert.Same(t, plain, dec[0], "payloads the codec did not encrypt pass through")
}

// TestStuckPlans: plans with feature stuck end in a stuck loop long enough
// for its onset and its whole bound, under every Warnings from 0 to 12,
// with rounds of concurrent calls both ways, and budgets out of its way;
// plans with feature longpause take each kind of long pause, go on after
// an escalation and start without a halt.
func TestStuckPlans(t *testing.T) {
	fs := mustFeatures(t, "all")
	warnings, shapes, pauses := map[int]bool{}, map[string]bool{}, map[schedule.LongPause]bool{}
	slowEscalate := 0
	for seed := int64(0); seed < 600; seed++ {
		p := schedule.Generate(seed, fs)
		if s := p.StuckLoop(); s != nil {
			require.NotNil(t, p.Liveness, "seed %d", seed)
			o := p.Options()
			warnings[o.Warnings] = true
			assert.Equal(t, schedule.LivenessBudget, o.MaxCallsPerNode, "seed %d", seed)
			assert.Equal(t, schedule.LivenessBudget, o.MaxCycleIterations, "seed %d", seed)
			assert.Equal(t, schedule.LivenessBudget, o.MaxTotalCalls, "seed %d", seed)
			b, err := interceptor.HaltBound(o, 1)
			require.NoError(t, err)
			assert.Equal(t, schedule.OnsetRounds(o)+b+1, s.Rounds, "seed %d: onset, bound and one more", seed)
			assert.Less(t, p.Calls(), schedule.LivenessBudget, "seed %d: no budget halts the loop first", seed)
			for _, g := range s.Round {
				shapes[fmt.Sprintf("width>1 %v, branches %v", g.Width > 1, g.Branches)] = true
			}
		}
		if p.LongPause != "" {
			pauses[p.LongPause] = true
		}
		if slices.Contains(p.Handlers, schedule.HandlerSlowEscalate) {
			slowEscalate++
		}
		if p.LongPause != "" || slices.Contains(p.Handlers, schedule.HandlerSlowEscalate) {
			assert.True(t, p.Runtime, "seed %d", seed)
			assert.False(t, p.StopOnEscalation || p.StartHalt, "seed %d", seed)
			assert.Equal(t, p.LongPause == schedule.LongPauseCancel, len(p.Cleanup) > 0, "seed %d: cleanup after a cancellation", seed)
		}
		if p.LongPause == schedule.LongPauseTimeout {
			o := p.Options()
			assert.Equal(t, schedule.LongPauseDelay, o.PauseTimeout, "seed %d", seed)
			assert.Equal(t, interceptor.TimeoutEscalate, o.OnPauseTimeout, "seed %d", seed)
		}
	}
	for w := 0; w <= schedule.MaxStuckWarnings; w++ {
		assert.True(t, warnings[w], "a stuck loop under Warnings %d", w)
	}
	for _, k := range []string{"width>1 true, branches true", "width>1 true, branches false", "width>1 false, branches false"} {
		assert.True(t, shapes[k], "a stuck loop's group of %s", k)
	}
	for _, k := range schedule.LongPauses {
		assert.True(t, pauses[k], "a long pause of kind %s", k)
	}
	assert.Positive(t, slowEscalate, "a slow handler that escalates")
}

// TestGroupCalls: a group's calls in a round have tags of their own that
// name the group, and the same outputs every round.
func TestGroupCalls(t *testing.T) {
	g := schedule.Group{Call: schedule.Call{Kind: schedule.KindActivity, Node: "Research", Tag: "t7", Output: "found"}, Width: 3, Distinct: true}
	r0, r5 := g.Calls(0), g.Calls(5)
	require.Len(t, r0, 3)
	tags := map[string]bool{}
	for i := range r0 {
		assert.Equal(t, "t7", schedule.StuckBase(r0[i].Tag))
		assert.Equal(t, r0[i].Output, r5[i].Output, "the same result every round")
		tags[r0[i].Tag], tags[r5[i].Tag] = true, true
	}
	assert.Len(t, tags, 6, "every call its own tag")
	assert.NotEqual(t, r0[0].Output, r0[1].Output, "distinct outputs")
	g.Distinct = false
	assert.Equal(t, g.Calls(0)[0].Output, g.Calls(0)[2].Output)
	assert.Empty(t, schedule.StuckBase("t7"), "a plan tag is no stuck loop's")
}
