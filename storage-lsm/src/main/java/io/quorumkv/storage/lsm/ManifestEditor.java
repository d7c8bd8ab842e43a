package io.quorumkv.storage.lsm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import io.quorumkv.storage.lsm.manifest.Manifest;
import io.quorumkv.storage.lsm.sstable.SsTable;

/**
 * The one way the set of tables changes: under the engine's manifest lock, write the
 * manifest of the edited state (durably, atomically), then publish that state. A crash
 * between the two leaves a manifest naming complete files; the in-memory state never
 * names a table the manifest does not.
 */
final class ManifestEditor {

	private final LsmEngine engine;

	ManifestEditor(LsmEngine engine) {
		this.engine = engine;
	}

	/** Writes the manifest of the edited state, then publishes it. */
	void publish(UnaryOperator<LsmState> edit) throws IOException {
		assert this.engine.manifestLock.isHeldByCurrentThread();
		LsmState next = edit.apply(this.engine.state.get());
		manifestOf(next, next.minLiveWal()).write(this.engine.io, this.engine.dir);
		this.engine.update(edit);
	}

	Manifest manifestOf(LsmState s, long minLiveWal) {
		List<Manifest.TableRef> tables = new ArrayList<>();
		for (int level = 0; level < s.levels().count(); level++) {
			for (SsTable t : s.levels().level(level)) {
				tables.add(new Manifest.TableRef(t.number(), level));
			}
		}
		return new Manifest(this.engine.nextFileNumber.get(), minLiveWal, tables, this.engine.nowMicros());
	}

}
