package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// secretPrefix marks a Standard Webhooks secret whose key is the base64 text after it.
const secretPrefix = "whsec_"

// signingKey is the HMAC key of secret: the base64-decoded rest of a "whsec_" secret, any
// other secret's bytes as they are.
func signingKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("the whsec_ secret is not base64 after its prefix")
	}
	return key, nil
}

// Sign is the Standard Webhooks signature header value of body sent as message id at
// timestamp (unix seconds): "v1," and the base64 HMAC-SHA256 of "id.timestamp.body".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// maxResponseBytes bounds how much of an endpoint's answer is read.
const maxResponseBytes = 64 << 10

// post sends body as JSON to target with the extra headers; a status outside 2xx is an
// error. Errors never quote the URL (a Slack webhook URL is a secret).
func post(ctx context.Context, client *http.Client, target string, headers http.Header, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("the endpoint URL is not valid")
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "runsdesk")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("POST failed: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		return nil
	case code >= 400 && code <= 499 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
		return &refusedError{status: resp.Status}
	}
	return fmt.Errorf("the endpoint answered %s", resp.Status)
}

// refusedError is an endpoint's 4xx answer other than 408 and 429: the request itself is
// refused, so repeating it cannot succeed and the notification fails at once.
type refusedError struct{ status string }

func (e *refusedError) Error() string {
	return "the endpoint answered " + e.status + " (refused; not retried)"
}
