package history

import (
	historypb "go.temporal.io/api/history/v1"
	updatepb "go.temporal.io/api/update/v1"
)

// An update's request is in its accepted event, unless an admitted event
// came first: then the accepted event names that event instead
// (acceptedRequestSequencingEventId) and holds no request. A reset
// writes one so for every update it reapplies from the base run
// (origin UPDATE_ADMITTED_EVENT_ORIGIN_REAPPLY): the operator's resume by
// update of a halted run, reset after it, is such an update.

// admitted keeps the request of an update admitted event e until the
// update is accepted.
func (r *runReader) admitted(e *historypb.HistoryEvent) {
	if r.admittedRequests == nil {
		r.admittedRequests = map[int64]*updatepb.Request{}
	}
	r.admittedRequests[e.GetEventId()] = e.GetWorkflowExecutionUpdateAdmittedEventAttributes().GetRequest()
}

// acceptedRequest is the request update accepted event a holds, or
// names.
func (r *runReader) acceptedRequest(a *historypb.WorkflowExecutionUpdateAcceptedEventAttributes) *updatepb.Request {
	if req := a.GetAcceptedRequest(); req != nil {
		return req
	}
	id := a.GetAcceptedRequestSequencingEventId()
	req := r.admittedRequests[id]
	delete(r.admittedRequests, id)
	return req
}
