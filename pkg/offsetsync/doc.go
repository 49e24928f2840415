// Package offsetsync owns kmm's upstream→downstream offset mapping: for every source
// topic-partition of a flow S->T, the offset syncs (source record u landed at target offset d)
// written by kmm's replicator or by Apache MirrorMaker 2 to `mm2-offset-syncs.<C>.internal`, and
// the translation of a consumer group's committed source offset into an offset committable on the
// target.
//
// # Translation rule
//
// Translate applies MM2's 3.5+ rule (OffsetSyncStore.translateDownstream): with the newest kept
// sync (u, d) whose u ≤ the group's offset g, the result is d when g == u and d+1 when g > u; a
// group behind every kept sync, or a partition without syncs, is not translated. The rule never
// skips a record: every record after u landed after d. kmm adds what MM2 does not say: the bound,
// the largest number of records the group already consumed on the source that a consumer started
// at the translated offset may receive again (g-u-1, the records strictly between u and g), and
// Exact (bound 0). A group caught up with the replicated head (g == u+1 for the newest sync u) is
// exact.
//
// # History: dense, bounded, thinned by age
//
// MM2 keeps 64 exponentially spaced syncs per partition, so a group lagging L records may re-read
// up to about L. kmm keeps every sync it is given (16 bytes each) up to Options.MaxEntries per
// partition; when a partition is full its history is thinned with a relative-spacing rule: a sync
// is dropped only if its two neighbours stay within (head-upstream)>>shift of each other, where
// head is the newest sync. Recent syncs therefore stay at their original density (exact for
// caught-up groups, offset.lag.max for slightly lagging ones) and older ones get sparser in
// proportion to their age, so the bound of a group lagging L records is at most
// max(original sync spacing, L>>shift). shift starts at 7 (0.8 %) and is lowered one step (the
// error factor doubles) only when thinning cannot bring a partition under 3/4 of MaxEntries; the
// oldest kept sync is never thinned away. Stats reports the entries and bytes held.
//
// # Rewinds (kmm's choice, documented difference from MM2)
//
// A sync is appended only if it moves forward in both coordinates (u and d greater than the
// newest kept sync). An exact repeat of the newest sync is ignored. Any other sync resets the
// partition's history to that one sync:
//   - upstream rewind (u ≤ newest u: the replicator restarted from an older stored position, or
//     the source topic was recreated) — MM2 does the same for u < newest u;
//   - downstream rewind (d ≤ newest d while u advanced: the target topic was truncated or
//     recreated) — MM2 keeps its history here, so older syncs may point at target offsets that
//     now hold other records; kmm drops them.
//
// A restart's first sync can be coalesced with later ones (pending syncs keep only the newest per
// partition, in MM2 and in kmm), which hides the exact restart point; keeping the syncs before it
// could then under-report the bound, so kmm resets like MM2 instead of keeping a prefix.
//
// What no reader can see: translations never skip a record as long as the writer's first sync
// after a target truncation reaches the topic (MM2's rule also misses a truncation of exactly
// the last record: the next record lands at the same offset). The bound additionally assumes
// that the first sync of every replication run reaches the topic; a run whose first sync was
// coalesced away or lost in a crash wrote duplicates the syncs do not show, and a group may
// re-read those too. FuzzMappingInvariants models all of this.
//
// # Loading
//
// Load rebuilds a Store from the offset-syncs topic (partition 0, from the beginning) through
// the small Iterator interface, so it is testable without Kafka; package mm2read has the
// Kafka-backed iterator. Unlike MM2 3.5–3.7 (latest sync only after a restart) the whole
// retained history is kept. As in MM2, nothing is translated until the store is marked loaded.
// Compaction of the topic (only the newest sync per partition survives a cleaned segment) leaves
// a contiguous suffix of each partition's sync sequence, so what is rebuilt is still correct,
// only shorter.
//
// This package must not do I/O, talk to Kafka, log, know about consumer groups or checkpoints
// (that is package checkpoint), or sit on the per-record replication path. It has no cgo.
package offsetsync
