package offsetsync

import "testing"

func TestDbg(t *testing.T) {
	runModel(t, uint64(102), uint8('%'), []byte("222220222222221$227220&1$120"))
}
