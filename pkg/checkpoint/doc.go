// Package checkpoint owns the consumer-group side of offset translation for a flow S->T, as
// pure functions and in-memory state:
//
//   - Store: the latest checkpoint per (group, downstream topic-partition), loaded from
//     `<S>.checkpoints.internal` on T (partition 0, last record per key wins, as MM2's
//     CheckpointStore and MirrorClient read it). Checkpoints written by kmm and by Apache MM2
//     have the same bytes (package mm2wire) and are read alike; undecodable records are
//     skipped and counted; a tombstone deletes its key (MM2 never writes one).
//   - Compute and Tracker: MirrorCheckpointTask's checkpoint computation (§4.4): keep the
//     group's committed source offsets whose topic passes the topic filter, translate them with
//     the offset mapping (package offsetsync, MM2's 3.5+ rule), rename the topic for the target
//     (policy.RenameCheckpointTopic), and emit only what passes MM2's monotonic filter against
//     the Store: the first checkpoint of a partition, an upstream rewind, or a downstream
//     advance. Tracker keeps the groups' latest source offsets so that a commit (from tailing
//     __consumer_offsets or polling) and a new offset sync each re-evaluate only what they
//     touch; it returns checkpoints to write and learns, through Written, what was written.
//   - PlanGroupSync: the sync.group.offsets decision (§4.5): commit checkpointed offsets on T
//     only to groups with no active members there, forward only for Empty groups, all offsets
//     for groups that do not exist on T; active groups are reported with a reason instead of
//     being sent to the broker to fail.
//   - Translate: the pure core of `kmm translate-offsets`: per group, topic and partition, the
//     committed source offset, the translated target offset, how it was derived (checkpoint or
//     mapping), its age and whether it is exact or its bound, or the reasons a group cannot be
//     translated (no checkpoint, active on the target, no mapping for a partition, policy
//     mismatch, an offset past the end of the target partition). PlanApply turns its result
//     into commits for --apply.
//
// This package must not do I/O, talk to Kafka, log, read configuration, decide which groups a
// flow covers (the caller applies the groups filter), or sit on the per-record replication path.
// It has no cgo.
package checkpoint
