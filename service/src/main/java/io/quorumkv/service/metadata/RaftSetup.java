package io.quorumkv.service.metadata;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * The Ratis properties of the metadata group's server and clients: the RPC over the one
 * transport ({@link HttpRpcType}), the timing of {@link MetadataTiming}, and a log sized
 * for a ring (small segments, purged up to each snapshot).
 */
final class RaftSetup {

	private RaftSetup() {
	}

	static RaftProperties properties(Path folder, MetadataTiming settings) {
		RaftProperties properties = new RaftProperties();
		RaftConfigKeys.Rpc.setType(properties, HttpRpcType.INSTANCE);
		RaftServerConfigKeys.setStorageDir(properties, List.of(folder.toFile()));
		RaftServerConfigKeys.Rpc.setTimeoutMin(properties, millis(settings.electionMin()));
		RaftServerConfigKeys.Rpc.setTimeoutMax(properties, millis(settings.electionMax()));
		RaftServerConfigKeys.Rpc.setRequestTimeout(properties, millis(settings.requestTimeout()));
		RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
		RaftServerConfigKeys.Snapshot.setCreationGap(properties, settings.snapshotEvery());
		RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
		RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf("1MB"));
		RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf("64KB"));
		RaftServerConfigKeys.Log.setWriteBufferSize(properties, SizeInBytes.valueOf("2MB"));
		RaftServerConfigKeys.Log.Appender.setBufferByteLimit(properties, SizeInBytes.valueOf("1MB"));
		RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(properties, SizeInBytes.valueOf("256KB"));
		RaftClientConfigKeys.Rpc.setRequestTimeout(properties, millis(settings.requestTimeout()));
		return properties;
	}

	static TimeDuration millis(Duration duration) {
		return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
	}

}
