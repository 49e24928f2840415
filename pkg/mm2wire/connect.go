package mm2wire

// The Connect offsets topic (`mm2-offsets.<S>.internal` in dedicated mode) holds each MM2
// connector's source offsets. Kafka Connect writes them with its internal JsonConverter
// (schemas disabled): the key is the JSON array [connectorName, sourcePartitionMap] and the
// value the JSON of the source offset map, or null (a tombstone) to delete it.
//
// Connect looks keys up by re-serialising the wanted key and comparing bytes, so the encoders
// write exactly MM2's bytes: compact JSON, MM2's field order (Java HashMap iteration order of the
// fixed key sets, proven against the jars), Jackson's string escaping.

// Connector names of the MM2 connectors in dedicated mode (connect-mirror-maker.sh). On a
// normal Connect cluster the names are chosen by the user.
const (
	SourceConnectorName     = "MirrorSourceConnector"
	CheckpointConnectorName = "MirrorCheckpointConnector"
	HeartbeatConnectorName  = "MirrorHeartbeatConnector"
)

// SourceOffsetKey is the offsets-topic key of a MirrorSourceConnector source partition:
// ["<Connector>",{"cluster":"<Cluster>","partition":<Partition>,"topic":"<Topic>"}].
type SourceOffsetKey struct {
	Connector string // SourceConnectorName in dedicated mode
	Cluster   string // source cluster alias
	Topic     string // source topic name (not renamed)
	Partition int32
}

// AppendJSON appends the key exactly as MM2 writes it.
func (k SourceOffsetKey) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	dst = appendJSONString(dst, k.Connector)
	dst = append(dst, `,{"cluster":`...)
	dst = appendJSONString(dst, k.Cluster)
	dst = append(dst, `,"partition":`...)
	dst = appendJSONInt(dst, int64(k.Partition))
	dst = append(dst, `,"topic":`...)
	dst = appendJSONString(dst, k.Topic)
	return append(dst, "}]"...)
}

// CheckpointOffsetKey is the offsets-topic key of a MirrorCheckpointConnector source partition:
// ["<Connector>",{"partition":<Partition>,"topic":"<Topic>","group":"<Group>"}].
type CheckpointOffsetKey struct {
	Connector string // CheckpointConnectorName in dedicated mode
	Group     string
	Topic     string // downstream (renamed) topic, as in the checkpoint record
	Partition int32
}

// AppendJSON appends the key exactly as MM2 writes it.
func (k CheckpointOffsetKey) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	dst = appendJSONString(dst, k.Connector)
	dst = append(dst, `,{"partition":`...)
	dst = appendJSONInt(dst, int64(k.Partition))
	dst = append(dst, `,"topic":`...)
	dst = appendJSONString(dst, k.Topic)
	dst = append(dst, `,"group":`...)
	dst = appendJSONString(dst, k.Group)
	return append(dst, "}]"...)
}

// HeartbeatOffsetKey is the offsets-topic key of a MirrorHeartbeatConnector source partition:
// ["<Connector>",{"sourceClusterAlias":"<S>","targetClusterAlias":"<T>"}].
type HeartbeatOffsetKey struct {
	Connector          string // HeartbeatConnectorName in dedicated mode
	SourceClusterAlias string
	TargetClusterAlias string
}

// AppendJSON appends the key exactly as MM2 writes it.
func (k HeartbeatOffsetKey) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	dst = appendJSONString(dst, k.Connector)
	dst = append(dst, `,{"sourceClusterAlias":`...)
	dst = appendJSONString(dst, k.SourceClusterAlias)
	dst = append(dst, `,"targetClusterAlias":`...)
	dst = appendJSONString(dst, k.TargetClusterAlias)
	return append(dst, "}]"...)
}

// AppendOffsetValue appends the offsets-topic value {"offset":<offset>}. For the source
// connector the offset is that of the last replicated source record (MM2 resumes at offset+1);
// the checkpoint and heartbeat connectors always write 0.
func AppendOffsetValue(dst []byte, offset int64) []byte {
	dst = append(dst, `{"offset":`...)
	dst = appendJSONInt(dst, offset)
	return append(dst, '}')
}

func jsonErr(record, detail string) error {
	return &FieldError{Record: record, Err: ErrInvalid, Detail: detail}
}

// parseOffsetKey parses [connector, {object}] and returns the connector and the object.
func parseOffsetKey(b []byte, record string) (string, *jvalue, error) {
	v, present, err := parseJSON(b)
	if err != nil {
		return "", nil, jsonErr(record, err.Error())
	}
	if !present || v.kind != jArray || len(v.arr) != 2 {
		return "", nil, jsonErr(record, "not a two-element JSON array")
	}
	if v.arr[0].kind != jString {
		return "", nil, jsonErr(record, "connector name is not a string")
	}
	if v.arr[1].kind != jObject {
		return "", nil, jsonErr(record, "source partition is not a JSON object")
	}
	return v.arr[0].str, &v.arr[1], nil
}

func stringField(obj *jvalue, name, record string) (string, error) {
	f, ok := obj.get(name)
	if !ok || f.kind != jString {
		return "", &FieldError{Record: record, Field: name, Err: ErrInvalid, Detail: "not a string"}
	}
	return f.str, nil
}

func int32Field(obj *jvalue, name, record string) (int32, error) {
	f, ok := obj.get(name)
	if !ok {
		return 0, &FieldError{Record: record, Field: name, Err: ErrInvalid, Detail: "missing"}
	}
	n, ok := f.int32Value()
	if !ok {
		return 0, &FieldError{Record: record, Field: name, Err: ErrInvalid, Detail: "not a 32-bit integer"}
	}
	return n, nil
}

// DecodeSourceOffsetKey decodes a MirrorSourceConnector offsets-topic key written by MM2 or by
// anything else: fields in any order, any JSON whitespace, trailing bytes ignored, leading
// zeros allowed, last duplicate wins. The partition map must hold exactly cluster (string),
// partition (integer in int32 range) and topic (string). Keys of other connectors are errors.
// Only keys whose bytes equal SourceOffsetKey.AppendJSON of the result are seen by MM2's lookup.
func DecodeSourceOffsetKey(b []byte) (SourceOffsetKey, error) {
	const rec = "source offset key"
	conn, obj, err := parseOffsetKey(b, rec)
	if err != nil {
		return SourceOffsetKey{}, err
	}
	if !obj.hasExactly("cluster", "partition", "topic") {
		return SourceOffsetKey{}, jsonErr(rec, "partition map fields are not exactly cluster, partition, topic")
	}
	k := SourceOffsetKey{Connector: conn}
	if k.Cluster, err = stringField(obj, "cluster", rec); err != nil {
		return SourceOffsetKey{}, err
	}
	if k.Topic, err = stringField(obj, "topic", rec); err != nil {
		return SourceOffsetKey{}, err
	}
	if k.Partition, err = int32Field(obj, "partition", rec); err != nil {
		return SourceOffsetKey{}, err
	}
	return k, nil
}

// DecodeCheckpointOffsetKey decodes a MirrorCheckpointConnector offsets-topic key, with the
// leniency of DecodeSourceOffsetKey; the map must hold exactly group, partition and topic.
func DecodeCheckpointOffsetKey(b []byte) (CheckpointOffsetKey, error) {
	const rec = "checkpoint offset key"
	conn, obj, err := parseOffsetKey(b, rec)
	if err != nil {
		return CheckpointOffsetKey{}, err
	}
	if !obj.hasExactly("group", "partition", "topic") {
		return CheckpointOffsetKey{}, jsonErr(rec, "partition map fields are not exactly group, partition, topic")
	}
	k := CheckpointOffsetKey{Connector: conn}
	if k.Group, err = stringField(obj, "group", rec); err != nil {
		return CheckpointOffsetKey{}, err
	}
	if k.Topic, err = stringField(obj, "topic", rec); err != nil {
		return CheckpointOffsetKey{}, err
	}
	if k.Partition, err = int32Field(obj, "partition", rec); err != nil {
		return CheckpointOffsetKey{}, err
	}
	return k, nil
}

// DecodeHeartbeatOffsetKey decodes a MirrorHeartbeatConnector offsets-topic key, with the
// leniency of DecodeSourceOffsetKey; the map must hold exactly sourceClusterAlias and
// targetClusterAlias.
func DecodeHeartbeatOffsetKey(b []byte) (HeartbeatOffsetKey, error) {
	const rec = "heartbeat offset key"
	conn, obj, err := parseOffsetKey(b, rec)
	if err != nil {
		return HeartbeatOffsetKey{}, err
	}
	if !obj.hasExactly("sourceClusterAlias", "targetClusterAlias") {
		return HeartbeatOffsetKey{}, jsonErr(rec, "partition map fields are not exactly sourceClusterAlias, targetClusterAlias")
	}
	k := HeartbeatOffsetKey{Connector: conn}
	if k.SourceClusterAlias, err = stringField(obj, "sourceClusterAlias", rec); err != nil {
		return HeartbeatOffsetKey{}, err
	}
	if k.TargetClusterAlias, err = stringField(obj, "targetClusterAlias", rec); err != nil {
		return HeartbeatOffsetKey{}, err
	}
	return k, nil
}

// DecodeOffsetValue decodes an offsets-topic value. ok is false, with no error, when there is no
// offset: a nil value (tombstone), empty or blank bytes, JSON null, or an object without an
// "offset" field or with "offset":null. MM2 (MirrorUtils.unwrapOffset) treats all of these as
// "no stored position". Other members of the object are ignored. An offset that is not an
// integer in int64 range, or a value that is not an object, is an error (MM2 would fail too).
// Note that MM2 also treats a negative stored offset as "no position" when it resumes.
func DecodeOffsetValue(b []byte) (offset int64, ok bool, err error) {
	const rec = "offset value"
	v, present, perr := parseJSON(b)
	if perr != nil {
		return 0, false, jsonErr(rec, perr.Error())
	}
	if !present || v.kind == jNull {
		return 0, false, nil
	}
	if v.kind != jObject {
		return 0, false, jsonErr(rec, "not a JSON object")
	}
	f, found := v.get("offset")
	if !found || f.kind == jNull {
		return 0, false, nil
	}
	n, isInt := f.int64Value()
	if !isInt {
		return 0, false, &FieldError{Record: rec, Field: "offset", Err: ErrInvalid, Detail: "not a 64-bit integer"}
	}
	return n, true, nil
}
