package redisserver

import "testing"

func TestStartAnswersAndStops(t *testing.T) {
	s := StartT(t)
	if r, err := s.Do("SET", "k", "v"); err != nil || r != "+OK" {
		t.Fatalf("SET: %q, %v", r, err)
	}
	if r, err := s.Do("GET", "k"); err != nil || r != "$1" {
		t.Fatalf("GET: %q, %v", r, err)
	}
	s.Stop()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
}
