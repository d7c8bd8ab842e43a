package io.quorumkv.service.repair;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import com.dynatrace.hash4j.hashing.HashValue128;
import io.quorumkv.service.peer.Pacer;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.contract.ModelStorage;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/** A repair's trees for several peers come from one scan of the local storage. */
class RangeTreesTest {

	private static final int DEPTH = 4;

	@Test
	void oneScanBuildsEveryFiltersTreesAsIfEachWereBuiltAlone() {
		ModelStorage model = ModelStorage.inMemory();
		for (int i = 0; i < 1_000; i++) {
			model.upsert(Entry.value(key(i), ("v" + i).getBytes(StandardCharsets.UTF_8), 1_000 + i))
				.block(Duration.ofSeconds(5));
		}
		AtomicInteger scans = new AtomicInteger();
		Storage counted = countingScans(model, scans);
		List<TokenRange> ranges = TokenRange.split(4);
		Map<String, Predicate<byte[]>> keeps = new LinkedHashMap<>();
		keeps.put("even", (key) -> key[key.length - 1] % 2 == 0);
		keeps.put("all", (key) -> true);
		keeps.put("none", (key) -> false);
		Map<String, RangeTrees> built = RangeTrees
			.build(counted, ranges, DEPTH, keeps, new Pacer(0, Duration.ZERO, Schedulers.parallel()),
					Schedulers.boundedElastic())
			.block(Duration.ofSeconds(10));
		assertThat(scans).hasValue(1);
		assertThat(built).containsOnlyKeys("even", "all", "none");
		keeps.forEach((name, keep) -> {
			List<MerkleTree> expected = expected(model, ranges, keep);
			for (int r = 0; r < ranges.size(); r++) {
				MerkleTree tree = built.get(name).tree(r);
				for (int level = 0; level <= DEPTH; level++) {
					for (int index = 0; index < (1 << level); index++) {
						assertThat(tree.node(level, index)).as("%s, range %d, node %d/%d", name, r, level, index)
							.isEqualTo(expected.get(r).node(level, index));
					}
				}
			}
		});
		assertThat(built.get("all").tree(0).node(0, 0).count() + built.get("all").tree(1).node(0, 0).count()
				+ built.get("all").tree(2).node(0, 0).count() + built.get("all").tree(3).node(0, 0).count())
			.isEqualTo(1_000);
		assertThat(built.get("none").tree(0).node(0, 0).count()).isZero();
	}

	/** The trees of {@code keep}'s entries, added one by one. */
	private static List<MerkleTree> expected(ModelStorage model, List<TokenRange> ranges, Predicate<byte[]> keep) {
		List<MerkleTree> trees = ranges.stream().map((range) -> new MerkleTree(range, DEPTH)).toList();
		for (Entry entry : model.scan(new byte[0], null).collectList().block(Duration.ofSeconds(5))) {
			if (!keep.test(entry.key())) {
				continue;
			}
			long token = TokenRange.token(entry.key());
			HashValue128 hash = EntryDigest.of(entry).versionHash();
			for (int r = 0; r < ranges.size(); r++) {
				if (token >= ranges.get(r).start() && token <= ranges.get(r).end()) {
					trees.get(r).add(token, hash.getMostSignificantBits(), hash.getLeastSignificantBits());
				}
			}
		}
		trees.forEach(MerkleTree::seal);
		return trees;
	}

	private static byte[] key(int i) {
		return String.format("key-%05d", i).getBytes(StandardCharsets.UTF_8);
	}

	/** {@code storage}, counting its scans. */
	private static Storage countingScans(Storage storage, AtomicInteger scans) {
		InvocationHandler handler = (proxy, method, args) -> {
			if (method.getName().equals("scan")) {
				scans.incrementAndGet();
			}
			try {
				return method.invoke(storage, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		};
		return (Storage) Proxy.newProxyInstance(Storage.class.getClassLoader(), new Class<?>[] { Storage.class },
				handler);
	}

}
