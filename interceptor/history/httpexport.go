package history

import (
	"errors"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
)

// errHistoryContinues is decodeHTTPExport's error for one page of a
// longer history.
var errHistoryContinues = errors.New("one page of a history exported through the HTTP API, which continues (its nextPageToken is set): " +
	"export the whole history with `temporal workflow show --output json`, or let `worker analyze --query 'WorkflowId=\"ID\"'` fetch it")

// shorthandJSON decodes payloads in the HTTP API's shorthand too: a
// payload written as its JSON value, not as metadata and base64 data.
var shorthandJSON = temporalproto.CustomJSONUnmarshalOptions{
	DiscardUnknown: true,
	Metadata:       map[string]any{commonpb.EnablePayloadShorthandMetadataKey: true},
}

// decodeHTTPExport decodes a history the server's HTTP API wrote: GET
// /api/v1/namespaces/{ns}/workflows/{id}/history answers with a
// GetWorkflowExecutionHistoryResponse (the events under "history") and
// writes payloads in its shorthand, which the CLI's format does not
// accept. A bare history with shorthand payloads (the response's
// "history" cut out) reads too. ok is false when data is neither.
func decodeHTTPExport(data []byte) (h *historypb.History, ok bool, err error) {
	resp := &workflowservice.GetWorkflowExecutionHistoryResponse{}
	if shorthandJSON.Unmarshal(data, resp) == nil && len(resp.GetHistory().GetEvents()) > 0 {
		if len(resp.GetNextPageToken()) > 0 {
			return nil, true, errHistoryContinues
		}
		return resp.GetHistory(), true, nil
	}
	h = &historypb.History{}
	if shorthandJSON.Unmarshal(data, h) == nil && len(h.GetEvents()) > 0 {
		return h, true, nil
	}
	return nil, false, nil
}
