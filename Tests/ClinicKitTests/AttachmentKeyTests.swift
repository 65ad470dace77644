import Foundation
import GRDB
import Testing
@testable import ClinicKit
@testable import ClinicStoreSQLite

/// Crypto-shredding of attachments (issue 42): each file is sealed under a key of its own, kept
/// wrapped under the data key in the file's row, so the copies of its chunks a store leaves
/// behind after a delete (SQLite's WAL and free pages, PostgreSQL's heap before VACUUM, a
/// backup) open under nothing left in the database, data key included. On both stores, except
/// what reads SQLite's own file (the WAL, the key rotation, the down migration).
@Suite struct AttachmentKeyTests {
    let base = AttachmentTests()

    /// The sealed chunks of a file's part as the store keeps them.
    func sealedChunks(_ system: ClinicSystem, _ id: Int64, count: Int) throws -> [Data] {
        try system.database.reading { tx in
            try (0..<count).map { index in try #require(try tx.attachmentChunk(id, part: .file, index: index)) }
        }
    }

    /// Every cipher the database and the data key still give: the data key's, and each
    /// remaining attachment's own key unwrapped with it.
    func ciphersLeft(_ w: AttachmentTests.World) throws -> [FieldCipher] {
        try w.system.database.reading { tx in
            let data = try w.system.database.cipher(tx)
            var ciphers = [data]
            for client in [w.annaId, w.bob.id ?? 0] {
                for stored in try tx.attachments(ofClient: client) {
                    ciphers.append(try AttachmentController.fileCipher(stored, data))
                }
            }
            return ciphers
        }
    }

    @Test func aDeletedFilesLeftoverChunksOpenUnderNoKeyLeft() throws {
        let w = try base.world()
        let bytes = try base.pdfOfSize(AttachmentLimits.chunkSize + 10)
        let gone = try base.upload(w, bytes, name: "gone.pdf")
        let kept = try base.upload(w, try base.pdfOfSize(30_000), name: "kept.pdf")
        let stored = try #require(try w.system.database.reading { tx in try tx.attachment(id: gone.id) })
        #expect(stored.fileKey != nil, "a new file has a key of its own")
        let copies = try sealedChunks(w.system, gone.id, count: 2)
        // The copies are what is stored: the file's own key opens them, the data key does not.
        let own = try ciphersLeft(w)[1]
        #expect(try copies.enumerated().map { try own.open(bytes: $1, context: AttachmentController.chunkContext(gone.id, .file, $0)) }
            .reduce(Data(), +) == bytes)

        try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: gone.id)
        #expect(try w.system.database.reading { tx in try tx.attachment(id: gone.id) } == nil)
        #expect(try storedInt(w.system, "SELECT count(*) FROM attachments WHERE id = \(gone.id)") == 0, "the wrapped key went with the row")
        let left = try ciphersLeft(w)
        #expect(left.count == 2, "the data key and the kept file's key")
        for (index, copy) in copies.enumerated() {
            for cipher in left {
                #expect((try? cipher.open(bytes: copy, context: AttachmentController.chunkContext(gone.id, .file, index))) == nil,
                        "a leftover chunk opens under no key left")
            }
        }
        let content = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: kept.id)
        #expect(try w.files.bytes(content).count == 30_000 && content.info.name == "kept.pdf")
    }

    /// A file of the scheme before opens under the data key, its chunks read by both paths (the
    /// awaited one reads the row and the key check with each chunk); once removed, its chunks are
    /// `not_found`, as are those past its end.
    @Test func aFileStoredBeforeKeysOfTheirOwnStillOpens() async throws {
        let w = try base.world()
        let bytes = try base.pdfOfSize(AttachmentLimits.chunkSize + 10)
        let id = try storeTheOldWay(w, bytes, name: "old.pdf")
        #expect(try w.system.database.reading { tx in try tx.attachment(id: id)?.fileKey } == nil)
        let listed = try { try w.files.list(clientId: w.annaId, appointmentId: w.visitId) }()
        #expect(listed.map(\.name) == ["old.pdf"])
        let content = try { try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: id) }()
        #expect(try w.files.bytes(content) == bytes)
        #expect(content.chunkCount == 2)
        #expect(try await base.awaitedBytes(w.files, content) == bytes)
        let staff = try { try w.files.open(w.desk, appointmentId: w.visitId, attachmentId: id) }()
        #expect(try w.files.bytes(staff) == bytes)
        // A new file beside it takes the new scheme, and reads the same by both paths.
        let newBytes = try base.pdfOfSize(20_000)
        let new = try base.upload(w, newBytes, name: "new.pdf")
        #expect(try w.system.database.reading { tx in try tx.attachment(id: new.id)?.fileKey } != nil)
        let newContent = try await w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: new.id)
        #expect(try await base.awaitedBytes(w.files, newContent) == newBytes)
        try { try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: id) }()
        #expect(try { try w.files.list(clientId: w.annaId, appointmentId: w.visitId) }().map(\.name) == ["new.pdf"])
        let gone = ClinicError(.notFound, .attachmentNotFound, String(id))
        await #expect(throws: gone) { _ = try await w.files.chunk(content, index: 0) }
        #expect(throws: gone) { _ = try w.files.chunk(content, index: 0) }
        await #expect(throws: ClinicError(.notFound, .attachmentNotFound, String(new.id))) {
            _ = try await w.files.chunk(newContent, index: newContent.chunkCount)
        }
    }

    /// SQLite: a delete leaves the WAL truncated, so it holds none of the file's sealed bytes
    /// (before: a passive checkpoint left all of them there).
    @Test(.sqliteOnly) func aDeleteTruncatesTheWAL() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attach-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("c.sqlite").path
        let database = try SQLiteStore.open(path: path, migrations: projectMigrations)
        let w = try base.world(store: database)
        func walHolds(_ samples: [Data]) throws -> Int {
            guard let wal = FileManager.default.contents(atPath: path + "-wal") else { return 0 }
            return samples.filter { wal.range(of: $0) != nil }.count
        }
        func walSize() throws -> Int {
            (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        }
        func check(_ step: String, _ upload: () throws -> AttachmentInfo, delete: (AttachmentInfo) async throws -> Void) async throws {
            let info = try upload()
            let samples = try sealedChunks(w.system, info.id, count: 2).flatMap { chunk in
                [chunk.subdata(in: 100..<164), chunk.subdata(in: chunk.count - 64..<chunk.count)]
            }
            #expect(try walHolds(samples) == samples.count, "the samples are in the WAL while the file is stored (\(step))")
            try await delete(info)
            #expect(try walSize() == 0, "the WAL is truncated after the \(step)")
            #expect(try walHolds(samples) == 0)
        }
        let bytes = try base.pdfOfSize(AttachmentLimits.chunkSize + 1_000)
        try await check("remove", { try base.upload(w, bytes, name: "a.pdf") }) { info in
            try w.files.remove(clientId: w.annaId, appointmentId: w.visitId, attachmentId: info.id)
        }
        try await check("purge", { try base.upload(w, bytes, name: "b.pdf") }) { _ in
            w.clock.advance(w.visit.endsAt.timeIntervalSince(w.clock.now) + 2 * 86_400)
            let purged = try await w.files.purge(afterDays: 1)
            #expect(purged.files == 1)
        }
        let later = try w.system.appointments.createAppointment(
            clientId: w.annaId, departmentId: w.visit.departmentId,
            at: .local(LocalDateTime(year: 2026, month: 11, day: 30, hour: 9, minute: 20)!))
        try await check("account deletion", {
            try w.files.add(clientId: w.annaId, appointmentId: later.id ?? 0,
                            try w.files.prepare(AttachmentUpload(data: bytes, declaredType: nil, name: "c.pdf")))
        }) { _ in
            try w.system.clients.deleteAccount(clientId: w.annaId, password: "correct-horse-42")
        }
    }

    /// SQLite's key rotation re-wraps the files' own keys and leaves their chunks as they are; a
    /// file of the scheme before gets a key of its own (its chunks sealed again). All still open.
    @Test(.sqliteOnly) func keyRotationRewrapsTheFilesKeys() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("attach-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteStore.open(path: folder.appendingPathComponent("c.sqlite").path, migrations: projectMigrations)
        let w = try base.world(store: database)
        let newBytes = try base.pdfOfSize(AttachmentLimits.chunkSize + 10), oldBytes = try base.pdfOfSize(50_000)
        let new = try base.upload(w, newBytes, name: "new.pdf")
        let old = try storeTheOldWay(w, oldBytes, name: "old.pdf")
        func row(_ id: Int64) throws -> (key: Data?, chunks: [Data]) {
            try database.read { db in
                (try Data.fetchOne(db, sql: "SELECT file_key FROM attachments WHERE id = ?", arguments: [id]),
                 try Data.fetchAll(db, sql: "SELECT data FROM attachment_chunks WHERE attachment_id = ? ORDER BY id", arguments: [id]))
            }
        }
        let newBefore = try row(new.id), oldBefore = try row(old)
        try database.rotateKey()
        let newAfter = try row(new.id), oldAfter = try row(old)
        #expect(newAfter.chunks == newBefore.chunks, "a rotation leaves the chunks of a keyed file as they are")
        #expect(newAfter.key != nil && newAfter.key != newBefore.key, "and wraps its key again")
        #expect(oldBefore.key == nil && oldAfter.key != nil, "a file of the scheme before gets a key of its own")
        #expect(oldAfter.chunks.count == oldBefore.chunks.count && zip(oldAfter.chunks, oldBefore.chunks).allSatisfy { $0 != $1 })
        for (id, bytes, name) in [(new.id, newBytes, "new.pdf"), (old, oldBytes, "old.pdf")] {
            let content = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: id)
            let back = try w.files.bytes(content)
            #expect(content.info.name == name && back == bytes)
        }
    }

    /// SQLite's migration 20 moved down: the files with keys of their own are sealed again under
    /// the data key (all the older schema knows), and open again after moving up.
    @Test(.sqliteOnly) func movingDownSealsTheFilesUnderTheDataKey() throws {
        let w = try base.world()
        let database = try w.system.sqliteFile
        let bytes = try base.pdfOfSize(AttachmentLimits.chunkSize + 10)
        let info = try base.upload(w, bytes, name: "scan.pdf")
        try database.migrate(to: SQLiteStore.attachmentKeysVersion - 1)
        let data = try database.read { db in try database.cipher(db) }
        let chunks = try sealedChunks(w.system, info.id, count: 2)
        #expect(try chunks.enumerated().map { try data.open(bytes: $1, context: AttachmentController.chunkContext(info.id, .file, $0)) }
            .reduce(Data(), +) == bytes)
        try database.migrate()
        let content = try w.files.open(clientId: w.annaId, appointmentId: w.visitId, attachmentId: info.id)
        let back = try w.files.bytes(content)
        #expect(content.info.name == "scan.pdf" && back == bytes)
    }

    /// An attachment as this program stored it before keys of their own: meta and chunks sealed
    /// directly under the data key, no wrapped key.
    func storeTheOldWay(_ w: AttachmentTests.World, _ bytes: Data, name: String) throws -> Int64 {
        try w.system.database.writing { tx in
            let cipher = try w.system.database.sealingCipher(tx)
            let id = try tx.insertAttachment(NewAttachment(
                appointmentId: w.visitId, clientId: w.annaId, author: .patient, staffId: nil, contentType: "application/pdf",
                size: bytes.count, width: nil, height: nil, thumbnailSize: 0, chunkSize: AttachmentLimits.chunkSize,
                createdAt: w.clock.now))
            let meta = try JSONEncoder().encode(AttachmentMeta(name: name, sha256: AttachmentFile.sha256(bytes)))
            try tx.setAttachmentMeta(try cipher.seal(bytes: meta, context: AttachmentController.metaContext(id)), fileKey: nil,
                                     ofAttachment: id)
            var index = 0, offset = bytes.startIndex
            while offset < bytes.endIndex {
                let end = min(offset + AttachmentLimits.chunkSize, bytes.endIndex)
                try tx.insertAttachmentChunk(id, part: .file, index: index, data: try cipher.seal(
                    bytes: bytes[offset..<end], context: AttachmentController.chunkContext(id, .file, index)))
                index += 1
                offset = end
            }
            return id
        }
    }
}
