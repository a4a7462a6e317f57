package interceptor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// RegisterSearchAttributes registers on namespace the search attributes
// opts names and the namespace lacks: Options.SearchAttribute as a Keyword,
// Options.PausedSinceAttribute as a Datetime. Call it before the worker
// starts, as the README does: the guard sets its attribute only on halts
// and decisions, and an attribute the namespace lacks makes that workflow
// task fail again and again (the workflow hangs at its halt) until someone
// registers it. It returns once the namespace lists them. Registering
// needs the operator API (self-hosted servers, the embedded server, the
// temporal CLI's dev server); where the server refuses it (Temporal Cloud
// registers attributes with tcld or its UI), the error gives the command
// an operator runs. An attribute already registered with another type is
// an error. With neither option set it does nothing.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string, opts Options) error {
	want := map[string]enumspb.IndexedValueType{}
	if opts.SearchAttribute != "" {
		want[opts.SearchAttribute] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	if opts.PausedSinceAttribute != "" {
		want[opts.PausedSinceAttribute] = enumspb.INDEXED_VALUE_TYPE_DATETIME
	}
	if len(want) == 0 {
		return nil
	}
	missing, err := missingSearchAttributes(ctx, c, namespace, want)
	if err != nil || len(missing) == 0 {
		return err
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) { // another worker may have won the race
		return fmt.Errorf("loopguard: register search attributes on namespace %q: %w (an operator can run: %s)",
			namespace, err, createCommand(namespace, missing))
	}
	// The frontend lists an attribute once its cache has it; waiting here
	// keeps the first halt's upsert from racing the registration.
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		if missing, err = missingSearchAttributes(ctx, c, namespace, want); err != nil || len(missing) == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("loopguard: search attributes %s not listed on namespace %q yet: %w",
				strings.Join(sortedNames(missing), ", "), namespace, ctx.Err())
		case <-time.After(min(wait, time.Second)):
		}
	}
}

// missingSearchAttributes returns those of want that namespace lacks, and
// an error for one registered with another type or reserved by Temporal.
func missingSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) (map[string]enumspb.IndexedValueType, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("loopguard: list the search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, name := range sortedNames(want) {
		typ := want[name]
		if _, system := resp.GetSystemAttributes()[name]; system {
			return nil, fmt.Errorf("loopguard: search attribute %q is one of Temporal's own", name)
		}
		have, ok := resp.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case have != typ:
			return nil, fmt.Errorf("loopguard: search attribute %q is registered on namespace %q as %s, not %s", name, namespace, have, typ)
		}
	}
	return missing, nil
}

// createCommand is the temporal CLI command that registers attrs.
func createCommand(namespace string, attrs map[string]enumspb.IndexedValueType) string {
	cmd := "temporal operator search-attribute create --namespace " + namespace
	for _, name := range sortedNames(attrs) {
		cmd += " --name " + name + " --type " + attrs[name].String()
	}
	return cmd
}

func sortedNames(m map[string]enumspb.IndexedValueType) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// HaltsQuery is the visibility query that lists every halt waiting for an
// answer, in one listing: the running workflows a guard configured with
// the search attribute attr holds paused, and the executions paused with
// Temporal's Workflow Pause (ExecutionStatus "Paused"), as `worker watch`
// halts workflows that carry no guard. With attr empty it lists the
// latter only.
func HaltsQuery(attr string) string {
	paused := `ExecutionStatus = "Paused"`
	if attr == "" {
		return paused
	}
	return "(" + PausedQuery(attr) + ") OR " + paused
}
