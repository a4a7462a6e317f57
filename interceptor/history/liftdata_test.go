package history

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"google.golang.org/protobuf/proto"
)

// plainUnmarshal is the proto JSON decoder alone, what unmarshalHistory
// must give.
func plainUnmarshal(data []byte) (*historypb.History, error) {
	h := &historypb.History{}
	return h, temporalproto.CustomJSONUnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, h)
}

// TestUnmarshalHistoryAsTheDecoder: every history file in the
// repository's test data decodes to the same proto with the long
// payloads lifted as with the proto decoder alone.
func TestUnmarshalHistoryAsTheDecoder(t *testing.T) {
	var files []string
	for _, root := range []string{"testdata", "../../testsuite/testdata", "../../worker/testdata"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isHistoryName(d.Name()) {
				files = append(files, p)
			}
			return nil
		})
	}
	require.NotEmpty(t, files)
	lifted := 0
	for _, p := range files {
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		h, err := DecodeHistory(raw)
		if err != nil {
			continue // not a history (a manifest, a policy): TestDecodeHistory's
		}
		data := raw
		if isGzip(raw) {
			continue // gunzipped inside DecodeHistory; the plain files suffice
		}
		want, err := plainUnmarshal(data)
		require.NoError(t, err, p)
		assert.True(t, proto.Equal(want, h), "%s decodes as the proto decoder decodes it", p)
		if _, l := liftPayloadData(data); l != nil {
			lifted++
		}
	}
	assert.Positive(t, lifted, "some files have payloads long enough to lift")
}

// TestLiftPayloadData: which "data" values are lifted, and that what is
// not a payload's, or could be mistaken for a placeholder, decodes as the
// proto decoder decodes it.
func TestLiftPayloadData(t *testing.T) {
	long := strings.Repeat("loop guard payload ", 40)
	std := base64.StdEncoding.EncodeToString([]byte(long + "\xfb\xff"))
	url := base64.URLEncoding.EncodeToString([]byte(long + "\xfb\xff"))
	raw := base64.RawStdEncoding.EncodeToString([]byte(long + "x"))
	payload := func(data string) string {
		return `{"metadata":{"encoding":"anNvbi9wbGFpbg=="},"data":` + data + `}`
	}
	history := func(input, result string) string {
		return `{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED",
"workflowExecutionStartedEventAttributes":{"workflowType":{"name":"W"},"input":{"payloads":[` + input + `]}}},
{"eventId":"2","eventType":"EVENT_TYPE_ACTIVITY_TASK_FAILED","activityTaskFailedEventAttributes":{"failure":{"message":` + result + `}}}]}`
	}
	tests := []struct {
		name string
		give string
		want int // values lifted
	}{
		{"standard alphabet", history(payload(`"`+std+`"`), `"x"`), 1},
		{"URL alphabet", history(payload(`"`+url+`"`), `"x"`), 1},
		{"unpadded", history(payload(`"`+raw+`"`), `"x"`), 1},
		{"spaces around the colon", strings.Replace(history(payload(`"`+std+`"`), `"x"`), `"data":`, `"data" :  `, 1), 1},
		{"short", history(payload(`"bG9vcA=="`), `"x"`), 0},
		{"an escape inside", history(payload(`"`+std[:296]+`\u0041AAA"`), `"x"`), 0},
		{"a key inside a string", history(payload(`"bG9vcA=="`), `"he said \"data\": \"`+std+`\""`), 0},
		{"two payloads", history(payload(`"`+std+`"`)+","+payload(`"`+url+`"`), `"x"`), 2},
		{"a placeholder's text in the history", history(payload(`"`+base64.StdEncoding.EncodeToString(placeholder(0))+`"`)+","+payload(`"`+std+`"`), `"x"`), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, lifted := liftPayloadData([]byte(tt.give))
			assert.Len(t, lifted, tt.want)
			want, err := plainUnmarshal([]byte(tt.give))
			require.NoError(t, err)
			got := &historypb.History{}
			require.NoError(t, unmarshalHistory([]byte(tt.give), got))
			assert.True(t, proto.Equal(want, got), "as the proto decoder decodes it")
		})
	}
}

// TestUnmarshalHistoryFallsBack: a lifted value the proto decoder puts
// anywhere but a payload's data, or not at all, sends the decoding back
// to the original bytes.
func TestUnmarshalHistoryFallsBack(t *testing.T) {
	std := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 400)))
	for _, give := range []string{
		// "data" as the key of a field the history does not have: dropped
		// (DiscardUnknown), its placeholder never comes back.
		`{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED","workflowExecutionStartedEventAttributes":{"data":"` + std + `"}}]}`,
		// "data" inside a map of strings: kept as text, not a payload's.
		`{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED","workflowExecutionStartedEventAttributes":{"workflowType":{"name":"W"},"header":{}},"userMetadata":{"summary":{"metadata":{"data":"` + std + `"}}}}]}`,
	} {
		_, lifted := liftPayloadData([]byte(give))
		require.NotNil(t, lifted, "the value is lifted")
		want, err := plainUnmarshal([]byte(give))
		require.NoError(t, err)
		got := &historypb.History{}
		require.NoError(t, unmarshalHistory([]byte(give), got))
		assert.True(t, proto.Equal(want, got), fmt.Sprint(got))
	}
}
