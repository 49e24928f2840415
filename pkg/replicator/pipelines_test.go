package replicator

import (
	"fmt"
	"testing"

	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// assignTest places topics (name -> partitions) with assignPipelines on an engine of n
// pipelines, as startPartitions does, and returns the pipeline per topic (absent: round robin).
func assignTest(e *engine, topics map[string]int) map[string]int {
	src := map[string]rdkafka.TopicInfo{}
	ready := map[string]int{}
	var selected []string
	for t, n := range topics {
		src[t] = rdkafka.TopicInfo{Partitions: n}
		ready[e.flow.RemoteTopic(t)] = n
		selected = append(selected, t)
	}
	e.assignPipelines(selected, src, ready)
	out := map[string]int{}
	for t, n := range topics {
		i, ok := e.topicCop[t]
		if !ok {
			continue
		}
		out[t] = i
		e.copParts[i] += n - len(e.parts[t])
		for p := len(e.parts[t]); p < n; p++ {
			e.parts[t] = append(e.parts[t], &pstate{})
		}
	}
	return out
}

func newAssignEngine(pipelines int) *engine {
	return &engine{flow: &flow.Flow{SourceAlias: "A", Policy: policy.NewDefault(".", false, false)},
		copiers: make([]*rdkafka.Copier, pipelines), parts: map[string][]*pstate{}}
}

func TestAssignPipelinesWholeTopicsOnLargeFlows(t *testing.T) {
	e := newAssignEngine(2)
	topics := map[string]int{}
	for i := range 100 {
		topics[fmt.Sprintf("t%03d", i)] = 10 + i%7 // 1,000+ partitions, uneven topics
	}
	got := assignTest(e, topics)
	if len(got) != len(topics) {
		t.Fatalf("%d of %d topics placed whole on a flow of 1,000+ partitions", len(got), len(topics))
	}
	if d := e.copParts[0] - e.copParts[1]; d < -16 || d > 16 {
		t.Errorf("pipelines hold %v partitions: unbalanced by more than the largest topic", e.copParts)
	}
	// A topic added later goes to the pipeline with fewer partitions; one placed keeps its own.
	first := got["t000"]
	e.copParts[1-first] -= 100 // as if the other pipeline had less
	topics["t100"] = 10
	got = assignTest(e, topics)
	if got["t100"] != 1-first || got["t000"] != first {
		t.Errorf("t100 on %d (want %d, the lighter one), t000 on %d (want %d, where it was)", got["t100"], 1-first, got["t000"], first)
	}
}

func TestAssignPipelinesRoundRobinOnSmallFlows(t *testing.T) {
	for _, c := range []struct {
		name      string
		pipelines int
		topics    map[string]int
	}{
		{"few partitions", 2, map[string]int{"a": 12, "b": 12, "c": 12, "d": 12}},
		{"fewer topics than twice the pipelines", 2, map[string]int{"a": 600, "b": 600, "c": 600}},
		{"one pipeline", 1, map[string]int{"a": 600, "b": 600, "c": 600, "d": 600}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := assignTest(newAssignEngine(c.pipelines), c.topics); len(got) != 0 {
				t.Errorf("placed whole: %v, want round robin", got)
			}
		})
	}
}
