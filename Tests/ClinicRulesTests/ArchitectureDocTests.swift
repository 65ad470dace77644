import Foundation
import Testing

// docs/ARCHITECTURE.md against the files it describes: it stays short enough to read in an hour,
// and its "## Migrations" section lists exactly the migration files on disk, SQLite's (the `.sql`
// files directly in Migrations/) under "### SQLite" and PostgreSQL's (Migrations/postgres/) under
// "### PostgreSQL". A migration added without its row, or a row whose file is gone, fails here.

@Suite struct ArchitectureDocTests {
    /// The package's root: this file is Tests/ClinicRulesTests/ArchitectureDocTests.swift.
    static func root(_ filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static let maximumLines = 500

    @Test func architectureIsShortAndListsEveryMigrationOnDisk() throws {
        let root = Self.root()
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let lineCount = text.hasSuffix("\n") ? lines.count - 1 : lines.count
        #expect(lineCount <= Self.maximumLines, "docs/ARCHITECTURE.md has \(lineCount) lines; at most \(Self.maximumLines)")

        let listed = try Self.migrationsListed(lines)
        #expect(listed.unplaced.isEmpty, "migration files named in \"## Migrations\" outside its \"### SQLite\" and \"### PostgreSQL\" tables: \(listed.unplaced.sorted())")

        let sqlite = try Self.sqlFiles(in: root.appendingPathComponent("Migrations"))
        let postgres = try Self.sqlFiles(in: root.appendingPathComponent("Migrations/postgres"))
        #expect(!sqlite.isEmpty && !postgres.isEmpty, "no migration files found under \(root.path)/Migrations")
        #expect(listed.sqlite == sqlite,
                "SQLite: on disk but not listed \(sqlite.subtracting(listed.sqlite).sorted()); listed but not on disk \(listed.sqlite.subtracting(sqlite).sorted())")
        #expect(listed.postgres == postgres,
                "PostgreSQL: on disk but not listed \(postgres.subtracting(listed.postgres).sorted()); listed but not on disk \(listed.postgres.subtracting(postgres).sorted())")
    }

    /// The backticked migration file names of the "## Migrations" section, by the "###" table
    /// they are under.
    static func migrationsListed(_ lines: [String]) throws -> (sqlite: Set<String>, postgres: Set<String>, unplaced: Set<String>) {
        let name = try NSRegularExpression(pattern: "`([0-9]{4}_[A-Za-z0-9_]+\\.sql)`")
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "## Migrations" }) else {
            Issue.record("docs/ARCHITECTURE.md has no \"## Migrations\" section")
            return ([], [], [])
        }
        var sqlite = Set<String>(), postgres = Set<String>(), unplaced = Set<String>()
        var table: String?
        for line in lines[(start + 1)...] {
            if line.hasPrefix("## ") { break } // the next section
            if line.hasPrefix("### ") {
                table = line.dropFirst(4).trimmingCharacters(in: .whitespaces)
                continue
            }
            let range = NSRange(line.startIndex..<line.endIndex, in: line)
            for match in name.matches(in: line, range: range) {
                guard let found = Range(match.range(at: 1), in: line) else { continue }
                let file = String(line[found])
                switch table {
                case "SQLite": sqlite.insert(file)
                case "PostgreSQL": postgres.insert(file)
                default: unplaced.insert(file)
                }
            }
        }
        return (sqlite, postgres, unplaced)
    }

    /// The names of the `.sql` files directly in `folder` (not in its subfolders).
    static func sqlFiles(in folder: URL) throws -> Set<String> {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        return Set(names.filter { name in
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isFolder)
            return exists && !isFolder.boolValue && name.hasSuffix(".sql")
        })
    }
}
