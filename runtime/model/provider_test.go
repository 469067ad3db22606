package model

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestNewChoosesByKind(t *testing.T) {
	e, srv := startEndpoint(t, reply(200, helloBody))
	p, err := New(Settings{Kind: "openai", BaseURL: srv.URL, Model: "m"}, nil, nil)
	if err != nil {
		t.Fatalf("openai: %v", err)
	}
	if resp, err := p.Complete(context.Background(), userRequest()); err != nil || resp.Message.Content != "Hello there." || e.count() != 1 {
		t.Errorf("openai provider: %+v, %v, %d requests", resp, err, e.count())
	}

	p, err = New(Settings{Kind: "scripted", Script: []Turn{{Content: "scripted hello"}}}, nil, nil)
	if err != nil {
		t.Fatalf("scripted: %v", err)
	}
	if resp, err := p.Complete(context.Background(), userRequest()); err != nil || resp.Message.Content != "scripted hello" {
		t.Errorf("scripted provider: %+v, %v", resp, err)
	}
}

func TestNewRefusesUnknownKinds(t *testing.T) {
	for _, kind := range []string{"", "anthropic", "OpenAI"} {
		_, err := New(Settings{Kind: kind, BaseURL: "http://h/v1", Model: "m"}, nil, nil)
		if !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), `"`+kind+`"`) {
			t.Errorf("kind %q: error = %v", kind, err)
		}
	}
}

func TestNewPassesSettingsErrorsThrough(t *testing.T) {
	if _, err := New(Settings{Kind: "openai", BaseURL: "http://h/v1", Model: "m", APIKeyEnv: "NOPE"}, nil, func(string) string { return "" }); !errors.Is(err, ErrMissingEnv) {
		t.Errorf("openai: error = %v", err)
	}
	if _, err := New(Settings{Kind: "scripted", Script: []Turn{{ToolCalls: []ScriptedCall{{}}}}}, nil, nil); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("scripted: error = %v", err)
	}
}
