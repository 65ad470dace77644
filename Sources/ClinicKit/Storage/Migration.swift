import Crypto
import Foundation

/// One schema migration: `Migrations/NNNN_name.sql` with an up part and a down part,
/// separated by the marker lines `-- migrate:up` and `-- migrate:down`.
public struct Migration: Sendable, Equatable {
    public let version: Int
    public let name: String
    public let up: String
    public let down: String
    /// SHA-256 of the whole file, hex. An applied migration whose file changed is refused.
    public let checksum: String

    static let upMarker = "-- migrate:up"
    static let downMarker = "-- migrate:down"

    public init(version: Int, name: String, contents: String) throws {
        var upLines: [Substring] = []
        var downLines: [Substring] = []
        enum Part { case preamble, up, down }
        var part = Part.preamble
        var sawUp = false, sawDown = false
        // Split on the byte "\n" (a "\r\n" is one Character), and only a short line that starts
        // with "--" is looked at as a marker (not the comments): every command opens the
        // migrations (issue 55).
        for bytes in contents.utf8.split(separator: 10, omittingEmptySubsequences: false) {
            let line = Substring(bytes)
            let marker = bytes.count <= 64 && bytes.drop(while: { $0 == 32 || $0 == 9 }).starts(with: "--".utf8)
                ? line.trimmingCharacters(in: .whitespaces).lowercased() : nil
            if marker == Self.upMarker {
                guard !sawUp, !sawDown else { throw Self.malformed(version, name) }
                sawUp = true; part = .up; continue
            }
            if marker == Self.downMarker {
                guard sawUp, !sawDown else { throw Self.malformed(version, name) }
                sawDown = true; part = .down; continue
            }
            switch part {
            case .preamble: break
            case .up: upLines.append(line)
            case .down: downLines.append(line)
            }
        }
        guard sawUp, sawDown else { throw Self.malformed(version, name) }
        self.version = version
        self.name = name
        self.up = upLines.joined(separator: "\n")
        self.down = downLines.joined(separator: "\n")
        self.checksum = SHA256.hash(data: Data(contents.utf8)).hexString
    }

    private static func malformed(_ version: Int, _ name: String) -> ClinicError {
        ClinicError(.migrationMismatch, .migrationMalformed, String(format: "%04d_%@", version, name))
    }

    /// Reads every `NNNN_name.sql` file of a folder, in version order. Versions must run
    /// 1, 2, 3… without gaps or duplicates.
    public static func load(from directory: URL) throws -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw ClinicError(.storage, .migrationsMissing, directory.path)
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            let parts = stem.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 4, let version = Int(parts[0]) else {
                throw ClinicError(.migrationMismatch, .migrationMalformed, file)
            }
            let url = directory.appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: url.path),
                  let contents = String(data: data, encoding: .utf8)
            else { throw ClinicError(.migrationMismatch, .migrationMalformed, file) }
            migrations.append(try Migration(version: version, name: String(parts[1]), contents: contents))
        }
        migrations.sort { $0.version < $1.version }
        for (index, migration) in migrations.enumerated() where migration.version != index + 1 {
            throw ClinicError(.migrationMismatch, .migrationSequence, String(migration.version))
        }
        return migrations
    }
}

extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits a byte (on every request's token hash: no `String(format:)`).
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
