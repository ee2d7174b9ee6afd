package tokenbucket

import (
	"testing"
	"time"
)

// TestWaitDeadlineBoundary pins Wait's deadline check (outlasts) on its
// boundary, where the real clock (time.Until) would move under a test of
// Wait itself: a wait of w ms fits when exactly w ms are left and outlasts
// the deadline when a nanosecond less is. A deadline already past is
// outlasted by every wait Wait sleeps (w >= 1), though the division
// truncates it towards zero. TestWaitDeadline and TestWaitDeadlineAfterRival
// check that Wait refuses, without sleeping, exactly when outlasts says so.
func TestWaitDeadlineBoundary(t *testing.T) {
	for _, tc := range []struct {
		w        int64         // the wait the bucket needs, ms
		left     time.Duration // the time left before the deadline
		outlasts bool
	}{
		{w: 1, left: time.Millisecond, outlasts: false},
		{w: 1, left: time.Millisecond - 1, outlasts: true},
		{w: 3, left: 3 * time.Millisecond, outlasts: false},
		{w: 3, left: 3*time.Millisecond - 1, outlasts: true},
		{w: 3, left: 4*time.Millisecond - 1, outlasts: false},
		{w: 1, left: 0, outlasts: true},
		{w: 1, left: -time.Millisecond + 1, outlasts: true},
		{w: 1, left: -time.Hour, outlasts: true},
	} {
		if got := outlasts(tc.w, tc.left); got != tc.outlasts {
			t.Errorf("outlasts(%d ms, %v) = %v, want %v", tc.w, tc.left, got, tc.outlasts)
		}
	}
}
