package rdkafka

import (
	"testing"
	"time"
)

func TestLinkRTT(t *testing.T) {
	js := `{"name":"x","brokers":{
	  "127.0.0.1:29500/bootstrap":{"nodeid":-1,"rtt":{"avg":101000,"p99":120000,"cnt":3}},
	  "127.0.0.1:29500/1":{"nodeid":1,"rtt":{"avg":99000,"p99":130000,"cnt":2}},
	  "127.0.0.1:29501/2":{"nodeid":2,"rtt":{"avg":900000,"p99":900000,"cnt":0}}}}`
	r, ok := linkRTT(js)
	if !ok || r.Avg != 101*time.Millisecond || r.P99 != 130*time.Millisecond {
		t.Fatalf("got %+v %v, want avg 101ms p99 130ms (connections without requests ignored)", r, ok)
	}
	if _, ok := linkRTT(`{"brokers":{"b/1":{"rtt":{"avg":5,"cnt":0}}}}`); ok {
		t.Fatal("no request answered: want no figure")
	}
}
