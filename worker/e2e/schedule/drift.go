package schedule

import (
	"fmt"
	"reflect"
	"time"

	"github.com/loopguard/loopguard/interceptor"
)

// Drift is one set of Options a history is replayed with instead of the
// ones it was recorded with.
type Drift struct {
	// Field is the Options field changed ("*" for all at once).
	Field   string
	Options interceptor.Options
}

// DriftFields are the Options fields a drift changes: every field but the
// hooks (functions are code, not pinned options). Found by reflection, so a
// field added to Options is drifted without a change here.
func DriftFields() []string {
	t := reflect.TypeFor[interceptor.Options]()
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() != reflect.Func {
			out = append(out, t.Field(i).Name)
		}
	}
	return out
}

// Drifts returns, for each field of DriftFields, base with that field
// changed to another valid value (Field is the field's name) and, for a
// field base sets, base with it removed (Field "<name>=removed"); then base
// with every field changed at once (Field "*"). A field of a kind
// it cannot change is an error: teach driftValue that kind.
func Drifts(base interceptor.Options) ([]Drift, error) {
	var out []Drift
	all := base
	for _, name := range DriftFields() {
		vals, err := driftValues(base, name)
		if err != nil {
			return nil, err
		}
		changed := false
		for _, v := range vals {
			o, ok := withField(base, name, v)
			if !ok {
				continue
			}
			if v.IsZero() {
				out = append(out, Drift{Field: name + "=removed", Options: o})
				continue
			}
			if changed {
				continue
			}
			changed = true
			out = append(out, Drift{Field: name, Options: o})
			if a, ok := withField(all, name, v); ok {
				all = a
			}
		}
		if !changed {
			return nil, fmt.Errorf("drift: no valid other value for Options.%s", name)
		}
	}
	out = append(out, Drift{Field: "*", Options: all})
	return out, nil
}

// withField returns o with the named field set to v, and whether that is a
// valid guard configuration. When it is not, it tries again with a Window
// wide enough for any threshold, the companion change the guard requires.
func withField(o interceptor.Options, name string, v reflect.Value) (interceptor.Options, bool) {
	set := func(o interceptor.Options) interceptor.Options {
		rv := reflect.ValueOf(&o).Elem()
		rv.FieldByName(name).Set(v)
		return o
	}
	d := set(o)
	if _, err := interceptor.New(d); err == nil {
		return d, true
	}
	d.Window = 64
	d = set(d)
	_, err := interceptor.New(d)
	return d, err == nil
}

// driftValues proposes other values for the named field of base, best
// first; the first valid one is used, and a zero value (removing what base
// sets) is also returned when base sets the field.
func driftValues(base interceptor.Options, name string) ([]reflect.Value, error) {
	f := reflect.ValueOf(base).FieldByName(name)
	var cands []reflect.Value
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		for _, d := range []time.Duration{time.Millisecond, time.Hour} {
			cands = append(cands, reflect.ValueOf(d))
		}
	case f.Kind() == reflect.Int:
		for _, n := range []int{3, 7, 12, 2, 100} {
			cands = append(cands, reflect.ValueOf(n).Convert(f.Type()))
		}
	case f.Kind() == reflect.Float64:
		for _, x := range []float64{0.5, 1000} {
			cands = append(cands, reflect.ValueOf(x).Convert(f.Type()))
		}
	case f.Kind() == reflect.String:
		for _, s := range []string{"drift-" + name, "observe", "fail", "escalate", "resume", string(interceptor.GrainToolCall)} {
			cands = append(cands, reflect.ValueOf(s).Convert(f.Type()))
		}
	case f.Kind() == reflect.Bool:
		cands = append(cands, reflect.ValueOf(!f.Bool()))
	case f.Type() == reflect.TypeFor[[]interceptor.OperatorKey]():
		// A rotated operator key (issue 32): New takes only 32-byte
		// keys, and a pinned execution replays with the keys it started
		// with, whatever the worker holds now.
		cands = append(cands, reflect.ValueOf([]interceptor.OperatorKey{{ID: "drift-" + name, PublicKey: make([]byte, 32)}}))
	case f.Kind() == reflect.Slice || f.Kind() == reflect.Map:
		v, err := grow(f, name)
		if err != nil {
			return nil, err
		}
		cands = append(cands, v)
	default:
		return nil, fmt.Errorf("drift: Options.%s has kind %s, which driftValues cannot change yet", name, f.Kind())
	}
	var out []reflect.Value
	for _, c := range cands {
		if !reflect.DeepEqual(c.Interface(), f.Interface()) {
			out = append(out, c)
		}
	}
	if !f.IsZero() {
		out = append(out, reflect.Zero(f.Type()))
	}
	return out, nil
}

// grow returns a copy of a slice or map field with one more element, every
// field of which is set (a new Nodes key, a new Graph edge, a new path).
func grow(f reflect.Value, name string) (reflect.Value, error) {
	switch f.Kind() {
	case reflect.Slice:
		out := reflect.MakeSlice(f.Type(), 0, f.Len()+1)
		out = reflect.AppendSlice(out, f)
		el, err := element(f.Type().Elem(), name)
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.Append(out, el), nil
	case reflect.Map:
		if f.Type().Key().Kind() != reflect.String {
			return reflect.Value{}, fmt.Errorf("drift: Options.%s is a map keyed by %s", name, f.Type().Key())
		}
		out := reflect.MakeMap(f.Type())
		iter := f.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		el, err := element(f.Type().Elem(), name)
		if err != nil {
			return reflect.Value{}, err
		}
		for _, k := range append(append([]string(nil), ActivityNodes...), LocalNodes...) {
			if !out.MapIndex(reflect.ValueOf(k)).IsValid() {
				out.SetMapIndex(reflect.ValueOf(k).Convert(f.Type().Key()), el)
				return out, nil
			}
		}
		return reflect.Value{}, fmt.Errorf("drift: Options.%s has every node already", name)
	}
	return reflect.Value{}, fmt.Errorf("drift: Options.%s: not a slice or map", name)
}

// element builds one element for grow: strings name nodes or paths,
// numbers are small limits, booleans are set.
func element(t reflect.Type, name string) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	switch {
	case t == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(time.Millisecond))
	case t.Kind() == reflect.String:
		v.SetString("output")
	case t.Kind() == reflect.Int:
		v.SetInt(1)
	case t.Kind() == reflect.Float64:
		v.SetFloat(0.5)
	case t.Kind() == reflect.Bool:
		v.SetBool(true)
	case t.Kind() == reflect.Slice:
		el, err := element(t.Elem(), name)
		if err != nil {
			return reflect.Value{}, err
		}
		v = reflect.Append(reflect.MakeSlice(t, 0, 1), el)
	case t.Kind() == reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			el, err := element(t.Field(i).Type, name+"."+t.Field(i).Name)
			if err != nil {
				return reflect.Value{}, err
			}
			if el.Kind() == reflect.String && t.Field(i).Type.Kind() == reflect.String {
				// Struct strings (edge ends) name nodes the plans use.
				el = reflect.ValueOf(ActivityNodes[i%len(ActivityNodes)]).Convert(t.Field(i).Type)
			}
			v.Field(i).Set(el)
		}
	default:
		return reflect.Value{}, fmt.Errorf("drift: %s has kind %s, which element cannot build yet", name, t.Kind())
	}
	return v, nil
}
