package io.quorumkv.service.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.repair.MerkleTree.NodeHash;
import io.quorumkv.service.repair.RepairCodec.MalformedRepairException;
import io.quorumkv.service.repair.RepairCodec.NodeRef;
import io.quorumkv.service.repair.RepairCodec.NodesRequest;
import io.quorumkv.service.repair.RepairCodec.SessionId;
import io.quorumkv.service.repair.RepairCodec.TreesRequest;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class RepairCodecTest {

	final SessionId session = SessionId.random();

	@Test
	void everyBodyRoundTrips() {
		TreesRequest trees = new TreesRequest(this.session, 12, TokenRange.split(4));
		assertThat(RepairCodec.trees(RepairCodec.trees(trees))).isEqualTo(trees);
		NodesRequest nodes = new NodesRequest(this.session, List.of(new NodeRef(0, 4, 3), new NodeRef(3, 12, 4095)));
		assertThat(RepairCodec.nodes(RepairCodec.nodes(nodes))).isEqualTo(nodes);
		List<NodeHash> hashes = List.of(new NodeHash(-1, 2, 3), new NodeHash(4, -5, 0));
		assertThat(RepairCodec.hashes(RepairCodec.hashes(hashes))).isEqualTo(hashes);
		RepairCodec.Done done = new RepairCodec.Done(42, TokenRange.split(2));
		assertThat(RepairCodec.done(RepairCodec.done(done))).isEqualTo(done);
		assertThat(SessionId.parse(this.session.hex())).isEqualTo(this.session);
	}

	@Test
	void digestStreamsAreCutWhereverTheBuffersEnd() {
		List<EntryDigest> digests = List.of(EntryDigest.of(Entry.value(bytes("a"), bytes("1"), 1)),
				EntryDigest.of(Entry.tombstone(bytes("bb"), 2)),
				EntryDigest.of(Entry.expiring(bytes("lease"), bytes("v"), 4, 4_000_004)),
				EntryDigest.of(Entry.value(bytes("ccc"), new byte[0], 3)));
		byte[] stream = new byte[0];
		for (EntryDigest digest : digests) {
			byte[] frame = RepairCodec.digest(digest);
			int at = stream.length;
			stream = Arrays.copyOf(stream, at + frame.length);
			System.arraycopy(frame, 0, stream, at, frame.length);
		}
		for (int cut = 0; cut <= stream.length; cut++) {
			FrameDecoder<EntryDigest> decoder = RepairCodec.digests(1024);
			List<EntryDigest> decoded = new ArrayList<>(decoder.decode(Arrays.copyOfRange(stream, 0, cut)));
			decoded.addAll(decoder.decode(Arrays.copyOfRange(stream, cut, stream.length)));
			assertThat(decoded).as("cut at %d", cut).isEqualTo(digests);
			assertThat(decoded.get(2).expiresAt()).isEqualTo(4_000_004);
			assertThat(decoder.isComplete()).isTrue();
		}
	}

	@Test
	void malformedBodiesAreRefusedNotReadPast() {
		byte[] trees = RepairCodec.trees(new TreesRequest(this.session, 12, TokenRange.split(2)));
		for (int length = 0; length < trees.length; length++) {
			byte[] cut = Arrays.copyOf(trees, length);
			assertThatThrownBy(() -> RepairCodec.trees(cut)).isInstanceOf(MalformedRepairException.class);
		}
		byte[] deep = trees.clone();
		deep[19] = 99;
		assertThatThrownBy(() -> RepairCodec.trees(deep)).hasMessageContaining("depth");
		byte[] nodes = RepairCodec.nodes(new NodesRequest(this.session, List.of(new NodeRef(0, 0, 0))));
		nodes[19] = 2;
		assertThatThrownBy(() -> RepairCodec.nodes(nodes)).hasMessageContaining("does not match");
		assertThatThrownBy(() -> RepairCodec.digests(8).decode(new byte[] { 0, 0, 0, 9 }))
			.isInstanceOf(MalformedRepairException.class);
		assertThatThrownBy(() -> SessionId.parse("xyz")).isInstanceOf(MalformedRepairException.class);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
