package wire

import (
	"slices"
	"strconv"
)

// APIKey identifies a Fluss RPC (the int16 api_key of the request header).
// Keys 0..999 are reserved by Fluss for Kafka compatibility; Fluss's own APIs
// start at 1000 (apache/fluss: fluss-rpc/src/main/java/org/apache/fluss/rpc/
// protocol/ApiKeys.java, tag v0.9.1-incubating).
type APIKey int16

// The Fluss API keys. Private server-to-server keys (1013 UPDATE_METADATA,
// 1018-1020, 1022, 1027-1031, 1042, 1043, 1052) are listed for completeness in
// log output but must never be sent by a client.
const (
	KeyAPIVersions                APIKey = 1000
	KeyCreateDatabase             APIKey = 1001
	KeyDropDatabase               APIKey = 1002
	KeyListDatabases              APIKey = 1003
	KeyDatabaseExists             APIKey = 1004
	KeyCreateTable                APIKey = 1005
	KeyDropTable                  APIKey = 1006
	KeyGetTableInfo               APIKey = 1007
	KeyListTables                 APIKey = 1008
	KeyListPartitionInfos         APIKey = 1009
	KeyTableExists                APIKey = 1010
	KeyGetTableSchema             APIKey = 1011
	KeyGetMetadata                APIKey = 1012
	KeyUpdateMetadata             APIKey = 1013 // private
	KeyProduceLog                 APIKey = 1014
	KeyFetchLog                   APIKey = 1015
	KeyPutKv                      APIKey = 1016
	KeyLookup                     APIKey = 1017
	KeyNotifyLeaderAndIsr         APIKey = 1018 // private
	KeyStopReplica                APIKey = 1019 // private
	KeyAdjustIsr                  APIKey = 1020 // private
	KeyListOffsets                APIKey = 1021
	KeyCommitKvSnapshot           APIKey = 1022 // private
	KeyGetLatestKvSnapshots       APIKey = 1023
	KeyGetKvSnapshotMetadata      APIKey = 1024
	KeyGetFileSystemSecurityToken APIKey = 1025
	KeyInitWriter                 APIKey = 1026
	KeyCommitRemoteLogManifest    APIKey = 1027 // private
	KeyNotifyRemoteLogOffsets     APIKey = 1028 // private
	KeyNotifyKvSnapshotOffset     APIKey = 1029 // private
	KeyCommitLakeTableSnapshot    APIKey = 1030 // private
	KeyNotifyLakeTableOffset      APIKey = 1031 // private
	KeyGetLakeSnapshot            APIKey = 1032
	KeyLimitScan                  APIKey = 1033
	KeyPrefixLookup               APIKey = 1034
	KeyGetDatabaseInfo            APIKey = 1035
	KeyCreatePartition            APIKey = 1036
	KeyDropPartition              APIKey = 1037
	KeyAuthenticate               APIKey = 1038
	KeyCreateAcls                 APIKey = 1039
	KeyListAcls                   APIKey = 1040
	KeyDropAcls                   APIKey = 1041
	KeyLakeTieringHeartbeat       APIKey = 1042 // private
	KeyControlledShutdown         APIKey = 1043 // private
	KeyAlterTable                 APIKey = 1044
	KeyDescribeClusterConfigs     APIKey = 1045
	KeyAlterClusterConfigs        APIKey = 1046
	KeyAddServerTag               APIKey = 1047
	KeyRemoveServerTag            APIKey = 1048
	KeyRebalance                  APIKey = 1049
	KeyListRebalanceProgress      APIKey = 1050
	KeyCancelRebalance            APIKey = 1051
	KeyPrepareLakeTableSnapshot   APIKey = 1052 // private
	KeyRegisterProducerOffsets    APIKey = 1053
	KeyGetProducerOffsets         APIKey = 1054
	KeyDeleteProducerOffsets      APIKey = 1055
	KeyAcquireKvSnapshotLease     APIKey = 1056
	KeyReleaseKvSnapshotLease     APIKey = 1057
	KeyDropKvSnapshotLease        APIKey = 1058
	KeyGetTableStats              APIKey = 1059
	// Fluss 1.0 (apache/fluss ApiKeys.java at 545c55390); never sent by the
	// gateway, named for log output.
	KeyAlterDatabase          APIKey = 1060
	KeyScanKv                 APIKey = 1061
	KeyGetClusterHealth       APIKey = 1062
	KeyListRemoteLogManifests APIKey = 1063
	KeyListKvSnapshots        APIKey = 1064
)

// apiNames holds the upper-case Fluss names of all keys known in 0.9.1 and 1.0.
var apiNames = map[APIKey]string{
	KeyAPIVersions:                "API_VERSIONS",
	KeyCreateDatabase:             "CREATE_DATABASE",
	KeyDropDatabase:               "DROP_DATABASE",
	KeyListDatabases:              "LIST_DATABASES",
	KeyDatabaseExists:             "DATABASE_EXISTS",
	KeyCreateTable:                "CREATE_TABLE",
	KeyDropTable:                  "DROP_TABLE",
	KeyGetTableInfo:               "GET_TABLE_INFO",
	KeyListTables:                 "LIST_TABLES",
	KeyListPartitionInfos:         "LIST_PARTITION_INFOS",
	KeyTableExists:                "TABLE_EXISTS",
	KeyGetTableSchema:             "GET_TABLE_SCHEMA",
	KeyGetMetadata:                "GET_METADATA",
	KeyUpdateMetadata:             "UPDATE_METADATA",
	KeyProduceLog:                 "PRODUCE_LOG",
	KeyFetchLog:                   "FETCH_LOG",
	KeyPutKv:                      "PUT_KV",
	KeyLookup:                     "LOOKUP",
	KeyNotifyLeaderAndIsr:         "NOTIFY_LEADER_AND_ISR",
	KeyStopReplica:                "STOP_REPLICA",
	KeyAdjustIsr:                  "ADJUST_ISR",
	KeyListOffsets:                "LIST_OFFSETS",
	KeyCommitKvSnapshot:           "COMMIT_KV_SNAPSHOT",
	KeyGetLatestKvSnapshots:       "GET_LATEST_KV_SNAPSHOTS",
	KeyGetKvSnapshotMetadata:      "GET_KV_SNAPSHOT_METADATA",
	KeyGetFileSystemSecurityToken: "GET_FILESYSTEM_SECURITY_TOKEN",
	KeyInitWriter:                 "INIT_WRITER",
	KeyCommitRemoteLogManifest:    "COMMIT_REMOTE_LOG_MANIFEST",
	KeyNotifyRemoteLogOffsets:     "NOTIFY_REMOTE_LOG_OFFSETS",
	KeyNotifyKvSnapshotOffset:     "NOTIFY_KV_SNAPSHOT_OFFSET",
	KeyCommitLakeTableSnapshot:    "COMMIT_LAKE_TABLE_SNAPSHOT",
	KeyNotifyLakeTableOffset:      "NOTIFY_LAKE_TABLE_OFFSET",
	KeyGetLakeSnapshot:            "GET_LAKE_SNAPSHOT",
	KeyLimitScan:                  "LIMIT_SCAN",
	KeyPrefixLookup:               "PREFIX_LOOKUP",
	KeyGetDatabaseInfo:            "GET_DATABASE_INFO",
	KeyCreatePartition:            "CREATE_PARTITION",
	KeyDropPartition:              "DROP_PARTITION",
	KeyAuthenticate:               "AUTHENTICATE",
	KeyCreateAcls:                 "CREATE_ACLS",
	KeyListAcls:                   "LIST_ACLS",
	KeyDropAcls:                   "DROP_ACLS",
	KeyLakeTieringHeartbeat:       "LAKE_TIERING_HEARTBEAT",
	KeyControlledShutdown:         "CONTROLLED_SHUTDOWN",
	KeyAlterTable:                 "ALTER_TABLE",
	KeyDescribeClusterConfigs:     "DESCRIBE_CLUSTER_CONFIGS",
	KeyAlterClusterConfigs:        "ALTER_CLUSTER_CONFIGS",
	KeyAddServerTag:               "ADD_SERVER_TAG",
	KeyRemoveServerTag:            "REMOVE_SERVER_TAG",
	KeyRebalance:                  "REBALANCE",
	KeyListRebalanceProgress:      "LIST_REBALANCE_PROGRESS",
	KeyCancelRebalance:            "CANCEL_REBALANCE",
	KeyPrepareLakeTableSnapshot:   "PREPARE_LAKE_TABLE_SNAPSHOT",
	KeyRegisterProducerOffsets:    "REGISTER_PRODUCER_OFFSETS",
	KeyGetProducerOffsets:         "GET_PRODUCER_OFFSETS",
	KeyDeleteProducerOffsets:      "DELETE_PRODUCER_OFFSETS",
	KeyAcquireKvSnapshotLease:     "ACQUIRE_KV_SNAPSHOT_LEASE",
	KeyReleaseKvSnapshotLease:     "RELEASE_KV_SNAPSHOT_LEASE",
	KeyDropKvSnapshotLease:        "DROP_KV_SNAPSHOT_LEASE",
	KeyGetTableStats:              "GET_TABLE_STATS",
	KeyAlterDatabase:              "ALTER_DATABASE",
	KeyScanKv:                     "SCAN_KV",
	KeyGetClusterHealth:           "GET_CLUSTER_HEALTH",
	KeyListRemoteLogManifests:     "LIST_REMOTE_LOG_MANIFESTS",
	KeyListKvSnapshots:            "LIST_KV_SNAPSHOTS",
}

// String returns the Fluss name of the key (for example "PUT_KV"), or
// "API_<n>" for a key unknown to 0.9.1.
func (k APIKey) String() string {
	if n, ok := apiNames[k]; ok {
		return n
	}
	return "API_" + strconv.Itoa(int(k))
}

// VersionRange is an inclusive range of API versions.
type VersionRange struct {
	Min int16
	Max int16
}

// Negotiate picks the version to use with a peer that advertises server:
// min(client.Max, server.Max), provided it is not below max(client.Min,
// server.Min). ok is false when the ranges do not overlap (apache/fluss:
// fluss-rpc/.../rpc/netty/client/ServerApiVersions.java).
func Negotiate(client, server VersionRange) (version int16, ok bool) {
	lo := max(client.Min, server.Min)
	hi := min(client.Max, server.Max)
	if lo > hi {
		return 0, false
	}
	return hi, true
}

// clientVersions are the version ranges this client implements for each API
// it sends. The maxima are what the gateway's codecs understand:
//
//   - PUT_KV v1: CompactedKeyEncoder keys when the bucket key differs from the
//     primary key. v2 (Fluss 1.0, apache/fluss PR #3463): same request and
//     response bodies; the client understands error 72
//     STORAGE_BACKPRESSURE_EXCEPTION, which a 1.0 server otherwise downgrades
//     to the retriable KV_STORAGE_EXCEPTION (ReplicaManager#putToLocalKv) that
//     this writer must treat as "may have been written". The writer throttles
//     on 72 and on the per-bucket `pressure` (sent on any version).
//     0.9.1 servers advertise 0..1, 1.0 servers 0..2.
//   - LOOKUP / PREFIX_LOOKUP v1: same key-encoding rule as PUT_KV v1.
//   - everything else: v0, the only version Fluss defines.
var clientVersions = map[APIKey]VersionRange{
	KeyAPIVersions:        {0, 0},
	KeyAuthenticate:       {0, 0},
	KeyGetMetadata:        {0, 0},
	KeyCreateDatabase:     {0, 0},
	KeyDropDatabase:       {0, 0},
	KeyListDatabases:      {0, 0},
	KeyDatabaseExists:     {0, 0},
	KeyGetDatabaseInfo:    {0, 0},
	KeyCreateTable:        {0, 0},
	KeyDropTable:          {0, 0},
	KeyGetTableInfo:       {0, 0},
	KeyListTables:         {0, 0},
	KeyTableExists:        {0, 0},
	KeyGetTableSchema:     {0, 0},
	KeyAlterTable:         {0, 0},
	KeyListPartitionInfos: {0, 0},
	KeyCreatePartition:    {0, 0},
	KeyDropPartition:      {0, 0},
	KeyProduceLog:         {0, 0},
	KeyFetchLog:           {0, 0},
	KeyPutKv:              {0, 2},
	KeyLookup:             {0, 1},
	KeyPrefixLookup:       {0, 1},
	KeyListOffsets:        {0, 0},
	KeyInitWriter:         {0, 0},
}

// ClientVersions returns the version range the client implements for key; ok
// is false for APIs the client never sends.
func ClientVersions(key APIKey) (VersionRange, bool) {
	r, ok := clientVersions[key]
	return r, ok
}

// ClientAPIs returns the keys the client implements, in ascending order.
func ClientAPIs() []APIKey {
	out := make([]APIKey, 0, len(clientVersions))
	for k := range clientVersions {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// server091Versions are the version ranges a Fluss 0.9.1-incubating server
// advertises (apache/fluss: ApiKeys.java at v0.9.1-incubating). The fake
// server uses them; a real client always trusts the ApiVersions response.
var server091Versions = map[APIKey]VersionRange{
	KeyPutKv:        {0, 1},
	KeyLookup:       {0, 1},
	KeyPrefixLookup: {0, 1},
}

// Server091Versions returns the version range a Fluss 0.9.1 server advertises
// for key: {0,1} for PUT_KV, LOOKUP and PREFIX_LOOKUP, {0,0} for every other
// known key. ok is false for keys unknown to 0.9.1.
func Server091Versions(key APIKey) (VersionRange, bool) {
	if _, known := apiNames[key]; !known || key > KeyGetTableStats {
		return VersionRange{}, false
	}
	if r, ok := server091Versions[key]; ok {
		return r, true
	}
	return VersionRange{0, 0}, true
}
