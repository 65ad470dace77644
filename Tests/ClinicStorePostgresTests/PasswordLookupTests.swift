import ClinicKit
@testable import ClinicStorePostgres
import Foundation
import Testing

/// PGPASSWORD, then PGPASSFILE or ~/.pgpass in libpq's format.
@Suite struct PasswordLookupTests {
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func write(_ text: String, to name: String = ".pgpass", mode: Int = 0o600) throws -> String {
        let path = folder + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    static let file = """
        # comment:line:that:looks:like-an-entry
        db.example.com:5432:clinic:alice:first\\:pass\\\\word
        db.example.com:*:*:alice:second
        localhost:5433:clinic:bob:socket-pass
        *:*:*:carol:any:thing
        short:line
        """

    @Test func entriesMatchInOrderWithWildcardsAndEscapes() throws {
        _ = try write(Self.file)
        let environment = ["HOME": folder]
        func lookup(_ url: String, _ user: String, _ database: String) throws -> String? {
            PasswordLookup.password(for: try PostgresURL(parsing: url), user: user, database: database, environment: environment)
        }
        #expect(try lookup("postgresql://db.example.com/clinic", "alice", "clinic") == "first:pass\\word")
        #expect(try lookup("postgresql://db.example.com:6000/other", "alice", "other") == "second")
        // A socket connection is matched as localhost (libpq's rule).
        #expect(try lookup("postgresql:///clinic?host=/tmp/s&port=5433", "bob", "clinic") == "socket-pass")
        #expect(try lookup("postgresql://elsewhere/clinic", "bob", "clinic") == nil)
        #expect(try lookup("postgresql://anywhere/x", "carol", "x") == "any:thing", "the password is the rest of the line")
    }

    @Test func pgpasswordComesFirstAndPGPASSFILEReplacesHome() throws {
        let other = try write("*:*:*:alice:from-passfile", to: "other")
        _ = try write("*:*:*:alice:from-home")
        let url = try PostgresURL(parsing: "postgresql://h/db")
        #expect(PasswordLookup.password(for: url, user: "alice", database: "db",
                                        environment: ["HOME": folder, "PGPASSWORD": "from-env", "PGPASSFILE": other]) == "from-env")
        #expect(PasswordLookup.password(for: url, user: "alice", database: "db",
                                        environment: ["HOME": folder, "PGPASSFILE": other]) == "from-passfile")
        #expect(PasswordLookup.password(for: url, user: "alice", database: "db", environment: ["HOME": folder]) == "from-home")
        #expect(PasswordLookup.password(for: url, user: "alice", database: "db", environment: ["HOME": folder + "/none"]) == nil)
    }

    @Test func aFileOthersCanReadIsIgnoredWithAWarning() throws {
        let path = try write("*:*:*:alice:leaked", mode: 0o644)
        var warnings: [ClinicError] = []
        let password = PasswordLookup.password(for: try PostgresURL(parsing: "postgresql://h/db"), user: "alice", database: "db",
                                               environment: ["HOME": folder]) { warnings.append($0) }
        #expect(password == nil)
        #expect(warnings.map(\.key) == [.storePasswordFileInsecure])
        #expect(warnings.first?.message(in: .en).contains(path) == true)
        #expect(warnings.first?.message(in: .en).contains("leaked") == false)
    }
}

/// SQLSTATE and constraint name decide; nothing else.
@Suite struct ErrorMappingTests {
    @Test func constraintsBecomeDomainRefusals() {
        typealias M = PostgresErrorMapping
        #expect(M.outcome(sqlState: "23P01", constraint: "appointments_doctor_no_overlap") == .error(ClinicError(.slotTaken, .slotTaken)))
        #expect(M.outcome(sqlState: "23P01", constraint: "appointments_client_no_overlap")
                == .error(ClinicError(.overlappingAppointment, .overlappingUnknown)))
        #expect(M.outcome(sqlState: "23505", constraint: "clients_login_key_key") == .error(ClinicError(.loginTaken, .loginTaken)))
        #expect(M.outcome(sqlState: "23505", constraint: "staff_accounts_login_key_key") == .error(ClinicError(.loginTaken, .loginTaken)))
        // The same SQLSTATE on another constraint is not that refusal.
        if case .error(let other) = M.outcome(sqlState: "23505", constraint: "sessions_token_hash_key") {
            #expect(other.code == .storage)
        } else { Issue.record("not an error") }
        #expect(M.outcome(sqlState: "40001", constraint: nil) == .retry)
        #expect(M.outcome(sqlState: "40P01", constraint: nil) == .retry)
        for state in ["57P01", "08006", "08003", "08001"] {
            #expect(M.outcome(sqlState: state, constraint: nil) == .error(ClinicError(.busy, .storeConnectionLost)), "\(state)")
        }
        for state in ["55P03", "57014", "25P03"] {
            #expect(M.outcome(sqlState: state, constraint: nil) == .error(ClinicError(.busy, .databaseBusy)), "\(state)")
        }
        for state in ["22021", "22P05"] {
            #expect(M.outcome(sqlState: state, constraint: nil) == .error(ClinicError(.invalidInput, .textNotStorable)), "\(state)")
        }
    }
}

/// Statements of a migration file, split where PostgreSQL would end them.
@Suite struct SQLScriptTests {
    @Test func splitsOnlyOutsideQuotesAndComments() {
        let script = """
            CREATE TABLE a (x text DEFAULT ';');  -- a comment; with a semicolon
            /* a block; comment */
            CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'no; never';
            END;
            $$;
            CREATE TABLE "odd;name" (y int);
            SELECT $tag$ ; $$ ; $tag$;
            -- only a comment at the end;
            """
        let statements = SQLScript.statements(script)
        #expect(statements.count == 4, "\(statements)")
        #expect(statements.first == "CREATE TABLE a (x text DEFAULT ';')")
        #expect(statements.dropFirst().first?.hasSuffix("$$") == true)
        #expect(statements.dropFirst(2).first == "CREATE TABLE \"odd;name\" (y int)")
        #expect(statements.last == "SELECT $tag$ ; $$ ; $tag$")
    }
}
