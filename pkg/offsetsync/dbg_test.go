package offsetsync

import "testing"

func TestDbg(t *testing.T) {
	runModel(t, 0, uint8(0x1a), []byte("2212122201CCCC0212217&07$07"))
}
