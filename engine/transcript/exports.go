package transcript

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Data exports hold every conversation of an account in one
// conversations.json, found where the unzipped export lies (by default
// ~/Downloads or one folder below it). Which service wrote it is told by
// its content: ChatGPT's conversations have a "mapping", Claude's
// "chat_messages".
//
// ChatGPT (Settings → Data controls → Export): [{id, title, create_time,
// update_time, mapping:{<node>:{id, parent, children, message:{id,
// author:{role}, create_time, content:{content_type, parts}, recipient,
// metadata}}}, current_node}]. The conversation is a tree (every edit and
// regeneration is a branch); the active branch runs from current_node up
// through the parents. Text parts of user and assistant messages
// addressed to all are prose; thoughts and reasoning_recap are thinking;
// code and messages to a tool (recipient not "all") are tool calls; tool
// messages and execution_output are tool results; system messages,
// user_editable_context (custom instructions) and messages hidden from the
// conversation are injected. (As the export's format is documented by
// OpenAI's help article "How do I export my ChatGPT history and data?" and
// read by franken_agent_detection's src/connectors/chatgpt.rs.)
//
// Claude (claude.ai or Claude Desktop → Settings → Privacy → Export data):
// [{uuid, name, created_at, updated_at, chat_messages:[{uuid, sender:
// "human"|"assistant", text, content:[{type:"text"|"thinking"|"tool_use"|
// "tool_result"}], created_at, parent_message_uuid, attachments}]}]; with
// parent links the active branch runs back from the last message.

func exportMatch(p []string) bool { return len(p) <= 2 && p[len(p)-1] == "conversations.json" }

// exportMaxBytes bounds an export file; one conversation is decoded at a time.
const exportMaxBytes = 8 << 30

// exportExtractor streams the conversations of an export the peek accepts.
func exportExtractor(peek func([]byte) bool, conv func(raw json.RawMessage, opt Options) (string, wholeDoc, error)) extractor {
	return func(ctx context.Context, path string, opt Options, emit func(string, wholeDoc) error) error {
		f, _, err := openRegular("", path)
		if err != nil {
			return err
		}
		defer f.Close()
		br := bufio.NewReaderSize(io.LimitReader(f, exportMaxBytes), 1<<20)
		head, _ := br.Peek(1 << 20)
		if !peek(head) {
			return nil // another service's export
		}
		dec := json.NewDecoder(br)
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return fmt.Errorf("conversations.json: not a list of conversations")
		}
		for n := 0; dec.More(); n++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fmt.Errorf("conversation %d: %w", n+1, err)
			}
			key, doc, err := conv(raw, opt)
			if err != nil || key == "" {
				key = fmt.Sprintf("conversation-%d", n+1)
				doc = wholeDoc{Session: Session{ID: key}, Items: []item{drop(Malformed)}}
			}
			if err := emit(key, doc); err != nil {
				return err
			}
		}
		return nil
	}
}

func chatGPTExportPeek(b []byte) bool { return bytes.Contains(b, []byte(`"mapping"`)) }
func claudeExportPeek(b []byte) bool  { return bytes.Contains(b, []byte(`"chat_messages"`)) }

type chatGPTNode struct {
	Parent  string `json:"parent"`
	Message *struct {
		ID     string `json:"id"`
		Author struct {
			Role string `json:"role"`
		} `json:"author"`
		CreateTime any `json:"create_time"`
		Content    struct {
			Type  string            `json:"content_type"`
			Parts []json.RawMessage `json:"parts"`
			Text  string            `json:"text"`
		} `json:"content"`
		Recipient string `json:"recipient"`
		Metadata  struct {
			Hidden bool `json:"is_visually_hidden_from_conversation"`
		} `json:"metadata"`
	} `json:"message"`
}

func extractChatGPTExport(raw json.RawMessage, opt Options) (string, wholeDoc, error) {
	var c struct {
		ID         string                 `json:"id"`
		ConvID     string                 `json:"conversation_id"`
		Title      string                 `json:"title"`
		CreateTime any                    `json:"create_time"`
		UpdateTime any                    `json:"update_time"`
		Mapping    map[string]chatGPTNode `json:"mapping"`
		Current    string                 `json:"current_node"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", wholeDoc{}, err
	}
	id := c.ConvID
	if id == "" {
		id = c.ID
	}
	doc := wholeDoc{Session: Session{ID: id, Summary: c.Title, Started: parseTime(c.CreateTime), Ended: parseTime(c.UpdateTime)}}
	var branch []string
	on := map[string]bool{}
	for n, hops := c.Current, 0; n != "" && hops <= len(c.Mapping); hops++ {
		node, ok := c.Mapping[n]
		if !ok || on[n] {
			break
		}
		on[n] = true
		branch = append(branch, n)
		n = node.Parent
	}
	for i := len(branch) - 1; i >= 0; i-- {
		if node := c.Mapping[branch[i]]; node.Message != nil {
			doc.Items = append(doc.Items, chatGPTItem(node, opt))
		}
	}
	var off []string
	for n, node := range c.Mapping {
		if !on[n] && node.Message != nil {
			off = append(off, n)
		}
	}
	sort.Strings(off)
	for range off {
		doc.Items = append(doc.Items, drop(Abandoned))
	}
	return id, doc, nil
}

func chatGPTItem(n chatGPTNode, opt Options) item {
	m := n.Message
	switch {
	case m.Author.Role == "system" || m.Metadata.Hidden || m.Content.Type == "user_editable_context":
		return drop(Injected)
	case m.Author.Role == "tool" || m.Content.Type == "execution_output":
		return drop(ToolResult)
	case m.Content.Type == "thoughts" || m.Content.Type == "reasoning_recap":
		return drop(Thinking)
	case m.Content.Type == "code" || (m.Recipient != "" && m.Recipient != "all"):
		return drop(ToolCall)
	}
	role := roleOf(m.Author.Role)
	if role == "" {
		return drop(Unknown)
	}
	var texts []string
	for _, p := range m.Content.Parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			texts = append(texts, s)
		} else if bytes.Contains(p, []byte(`"image_asset_pointer"`)) {
			texts = append(texts, "[image]")
		}
	}
	if len(texts) == 0 && m.Content.Text != "" {
		texts = append(texts, m.Content.Text)
	}
	t := strings.TrimSpace(strings.Join(texts, "\n"))
	if t == "[image]" {
		t = ""
	}
	return keep(Message{ID: m.ID, Role: role, Timestamp: parseTime(m.CreateTime), Text: t})
}

func extractClaudeExport(raw json.RawMessage, opt Options) (string, wholeDoc, error) {
	var c struct {
		UUID     string `json:"uuid"`
		Name     string `json:"name"`
		Created  string `json:"created_at"`
		Updated  string `json:"updated_at"`
		Messages []struct {
			UUID    string          `json:"uuid"`
			Sender  string          `json:"sender"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
			Created string          `json:"created_at"`
			Parent  string          `json:"parent_message_uuid"`
		} `json:"chat_messages"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", wholeDoc{}, err
	}
	doc := wholeDoc{Session: Session{ID: c.UUID, Summary: c.Name, Started: parseTime(c.Created), Ended: parseTime(c.Updated)}}
	// With parent links, the active branch runs back from the last message.
	on := map[string]bool{}
	idx := map[string]int{}
	for i, m := range c.Messages {
		idx[m.UUID] = i
	}
	linked := false
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Parent != "" {
		linked = true
		for i, hops := n-1, 0; hops <= n; hops++ {
			on[c.Messages[i].UUID] = true
			j, ok := idx[c.Messages[i].Parent]
			if !ok {
				break
			}
			i = j
		}
	}
	for _, m := range c.Messages {
		if linked && !on[m.UUID] {
			doc.Items = append(doc.Items, drop(Abandoned))
			continue
		}
		text, why := partsProse(m.Content, opt)
		if text == "" && why == Empty {
			text = strings.TrimSpace(m.Text)
		}
		if roleOf(m.Sender) == "" {
			doc.Items = append(doc.Items, drop(Unknown))
			continue
		}
		if text == "" {
			doc.Items = append(doc.Items, drop(why))
			continue
		}
		doc.Items = append(doc.Items, keep(Message{ID: m.UUID, Role: roleOf(m.Sender), Timestamp: parseTime(m.Created), Text: text}))
	}
	return c.UUID, doc, nil
}

// Stores that cannot be read without the agent's own process.

// antigravityUnreadable: Google Antigravity keeps each conversation as
// ~/.gemini/antigravity/conversations/<id>.pb, an encrypted protobuf.
func antigravityUnreadable(p []string) string {
	if len(p) == 2 && p[0] == "conversations" && strings.HasSuffix(p[1], ".pb") {
		return "Antigravity stores conversations encrypted (.pb); only Antigravity itself can read them"
	}
	return ""
}

// windsurfUnreadable: Windsurf keeps Cascade conversations as
// ~/.codeium/windsurf/cascade/<id>.pb, encrypted.
func windsurfUnreadable(p []string) string {
	if len(p) == 2 && p[0] == "cascade" && strings.HasSuffix(p[1], ".pb") {
		return "Windsurf stores Cascade conversations encrypted (.pb); only Windsurf itself can read them"
	}
	return ""
}
