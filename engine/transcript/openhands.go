package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// OpenHands' local file store keeps one folder per conversation,
// ~/.openhands/sessions/<conversation id>/ (newer versions:
// ~/.openhands/conversations/<id>/), with events/<n>.json, one event a file,
// and metadata.json ({title, selected_repository}). An event is an action or
// an observation: {id, timestamp, source:"user"|"agent"|"environment",
// action, args, observation, message}. The prose is the "message" action
// (args.content) of the user and the agent, and the agent's "finish"
// (args.final_thought); "think" is thinking; "system" and "recall" are
// injected prompts and context; every other action is a tool call and every
// observation a tool result. The V1 agent SDK writes {kind:"MessageEvent",
// source, llm_message:{role, content:[{type:"text"}]}} and ActionEvent /
// ObservationEvent / SystemPromptEvent instead, in events/event-<index, 5 or
// more digits>-<event id>.json beside base_state.json; their ids are UUID
// strings, an ActionEvent's action and an ObservationEvent's observation
// are objects, and a MessageEvent's extended_content (skills the harness
// adds) is left out with the rest of the injected context. (As
// All-Hands-AI/OpenHands' storage/locations.py and OpenHands/
// software-agent-sdk's conversation/persistence_const.py and
// event/llm_convertible/message.py lay them out.)

func openHandsMatch(p []string) bool { return len(p) == 1 && !strings.HasPrefix(p[0], ".") }

// openHandsMaxEvents bounds how many event files one conversation reads.
const openHandsMaxEvents = 200000

func readOpenHands(r *run) error {
	events := filepath.Join(r.path, "events")
	return r.readWhole(stamps(events, filepath.Join(r.path, "metadata.json")), func() (wholeDoc, error) {
		ents, err := os.ReadDir(events)
		if err != nil {
			return wholeDoc{}, err
		}
		doc := wholeDoc{Session: Session{ID: filepath.Base(r.path)}}
		var meta struct {
			Title string `json:"title"`
			Repo  string `json:"selected_repository"`
		}
		if readJSONDoc(filepath.Join(r.path, "metadata.json"), 1<<20, &meta) == nil {
			doc.Session.Summary, doc.Session.Project = meta.Title, meta.Repo
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
				names = append(names, e.Name())
			}
		}
		sort.Slice(names, func(i, j int) bool { return eventOrder(names[i]) < eventOrder(names[j]) })
		if len(names) > openHandsMaxEvents {
			names = names[:openHandsMaxEvents]
		}
		for _, n := range names {
			if err := r.ctx.Err(); err != nil {
				return doc, err
			}
			doc.Items = append(doc.Items, openHandsEvent(r, filepath.Join(events, n), strings.TrimSuffix(n, ".json")))
		}
		return doc, nil
	})
}

// eventOrder sorts "12.json" numerically and "event-00012-….json" by its number.
func eventOrder(name string) string {
	n := strings.TrimSuffix(name, ".json")
	n = strings.TrimPrefix(n, "event-")
	digits := n
	if i := strings.IndexFunc(n, func(c rune) bool { return c < '0' || c > '9' }); i >= 0 {
		digits = n[:i]
	}
	return strings.Repeat("0", max(0, 20-len(digits))) + n
}

func openHandsEvent(r *run, path, id string) item {
	var e struct {
		// A number in the V0 events, a UUID string in the V1 ones.
		ID        json.RawMessage `json:"id"`
		Timestamp string          `json:"timestamp"`
		Source    string          `json:"source"`
		// A string in the V0 events; an object (the tool's arguments or
		// output) in the V1 ActionEvent and ObservationEvent.
		ActionRaw      json.RawMessage `json:"action"`
		ObservationRaw json.RawMessage `json:"observation"`
		Kind           string          `json:"kind"`
		Args           struct {
			Content      string `json:"content"`
			FinalThought string `json:"final_thought"`
		} `json:"args"`
		LLMMessage struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"llm_message"`
		Action, Observation string `json:"-"`
	}
	if err := readJSONDoc(path, 64<<20, &e); err != nil {
		return drop(Malformed)
	}
	if v := jsonString(e.ID); v != "" {
		id = v
	} else if n := strings.TrimSpace(string(e.ID)); n != "" && n != "null" {
		id = n
	}
	e.Action, e.Observation = jsonString(e.ActionRaw), jsonString(e.ObservationRaw)
	role := map[string]string{"user": RoleUser, "agent": RoleAssistant}[e.Source]
	ts := parseTime(e.Timestamp)
	switch {
	case e.Kind == "MessageEvent":
		return chatItem(r.opt, OpenHands, id, e.LLMMessage.Role, e.LLMMessage.Content, ts)
	case e.Kind == "SystemPromptEvent":
		return drop(Injected)
	case e.Kind == "ActionEvent":
		return drop(ToolCall)
	case e.Kind == "ObservationEvent" || e.Kind == "UserRejectObservation" || e.Kind == "AgentErrorEvent":
		return drop(ToolResult)
	case e.Kind != "":
		return drop(Meta)
	case e.Action == "message" && role != "":
		return keep(Message{ID: id, Role: role, Timestamp: ts, Text: e.Args.Content})
	case e.Action == "finish":
		return keep(Message{ID: id, Role: RoleAssistant, Timestamp: ts, Text: e.Args.FinalThought})
	case e.Action == "think":
		return drop(Thinking)
	case e.Action == "system" || e.Action == "recall" || e.Observation == "recall":
		return drop(Injected)
	case e.Action == "change_agent_state" || e.Observation == "agent_state_changed" || e.Observation == "null":
		return drop(Meta)
	case e.Action != "":
		if r.opt.IncludeTools {
			return keep(Message{ID: id, Role: RoleAssistant, Timestamp: ts, Text: "[tool " + e.Action + "] " + e.Args.Content})
		}
		return drop(ToolCall)
	case e.Observation != "":
		return drop(ToolResult)
	}
	return drop(Unknown)
}

// jsonString is raw's value when it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
