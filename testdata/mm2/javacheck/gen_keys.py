# gen_keys.py FACTS.txt > mm2conf/keys_gen.go  (FACTS.txt is the output of Facts.java)
import sys, collections
sec = None
data = collections.OrderedDict()
for line in open(sys.argv[1], encoding='utf-8'):
    line = line.rstrip('\n')
    if line.startswith('== '):
        sec = line[3:]; data[sec] = []
        continue
    name, typ, dflt = line.split('\t')
    data[sec].append((name, typ, dflt))
def q(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'
out = []
out.append('// Code generated from the Kafka 4.1.1 ConfigDefs by testdata/mm2/javacheck/Facts.java; DO NOT EDIT.\n')
out.append('package mm2conf\n')
def defs(var, sec, doc):
    out.append('// %s\nvar %s = []keyDef{' % (doc, var))
    for n, t, d in data[sec]:
        if d == '<required>':
            out.append('\t{Name: %s, Type: %s, Required: true},' % (q(n), q(t)))
        elif d == 'null':
            out.append('\t{Name: %s, Type: %s, NullDefault: true},' % (q(n), q(t)))
        else:
            out.append('\t{Name: %s, Type: %s, Default: %s},' % (q(n), q(t), q(d)))
    out.append('}\n')
def names(var, sec, doc):
    out.append('// %s\nvar %s = []string{' % (doc, var))
    for n, t, d in data[sec]:
        out.append('\t%s,' % q(n))
    out.append('}\n')
defs('clientConfigDefKeys', 'client', 'clientConfigDefKeys is MirrorClientConfig.CLIENT_CONFIG_DEF: the "client security keys" that MM2 copies between prefixes.')
defs('sourceConnectorKeys', 'MirrorSourceConfig', 'sourceConnectorKeys is MirrorSourceConfig.CONNECTOR_CONFIG_DEF.')
defs('checkpointConnectorKeys', 'MirrorCheckpointConfig', 'checkpointConnectorKeys is MirrorCheckpointConfig.CONNECTOR_CONFIG_DEF.')
defs('heartbeatConnectorKeys', 'MirrorHeartbeatConfig', 'heartbeatConnectorKeys is MirrorHeartbeatConfig.CONNECTOR_CONFIG_DEF.')
defs('mirrorMakerKeys', 'MirrorMakerConfig', 'mirrorMakerKeys is the ConfigDef of MirrorMakerConfig itself (top-level keys).')
defs('workerKeys', 'worker', 'workerKeys is the Connect DistributedConfig ConfigDef (the worker config of each herder).')
names('producerKeys', 'producer', 'producerKeys is ProducerConfig.configNames().')
names('consumerKeys', 'consumer', 'consumerKeys is ConsumerConfig.configNames().')
names('adminKeys', 'admin', 'adminKeys is AdminClientConfig.configNames().')
sys.stdout.write('\n'.join(out))
