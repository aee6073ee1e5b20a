package longwait

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
)

// Webhook posts alerts to a Slack-compatible incoming webhook: a JSON
// object whose "text" is the message, which Slack, Mattermost, Rocket.Chat
// and Discord's /slack endpoint take. The URL is a credential: it never
// appears in an error or a log line.
type Webhook struct {
	url    string
	client *http.Client
	clock  clock.Clock
}

// webhookTries and webhookBackoff: a delivery is tried 3 times, 1 s then
// 2 s apart, when the receiver is unreachable, busy (429) or failing
// (5xx); another refusal (4xx) is not retried.
const (
	webhookTries   = 3
	webhookBackoff = time.Second
)

// NewWebhook checks the URL: http or https, with a host.
func NewWebhook(raw string, c clock.Clock) (*Webhook, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the long-wait webhook is not an http(s) URL with a host")
	}
	if c == nil {
		c = clock.System(nil)
	}
	return &Webhook{url: raw, client: &http.Client{Timeout: 10 * time.Second}, clock: c}, nil
}

// Notify posts the alert.
func (w *Webhook) Notify(ctx context.Context, a Alert) error {
	body, err := json.Marshal(map[string]string{"text": a.Text()})
	if err != nil {
		return err
	}
	delay := webhookBackoff
	for try := 1; ; try++ {
		retry, err := w.post(ctx, body)
		if err == nil || !retry || try == webhookTries {
			return err
		}
		t := w.clock.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C():
		}
		delay *= 2
	}
}

// post sends body once; retry says whether another try may succeed.
func (w *Webhook) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("webhook: cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return true, fmt.Errorf("webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("webhook: HTTP %d", resp.StatusCode)
	}
	return false, fmt.Errorf("webhook: HTTP %d (not retried)", resp.StatusCode)
}
