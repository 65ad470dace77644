import ClinicKit
import ClinicTestPostgres
@testable import ClinicStorePostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// The store against a real PostgreSQL 15 (TestPostgres): connecting, migrating, constraints.
@Suite struct PostgresStoreTests {
    let logger = TestPostgres.logger

    @Test func migrateUpOnAnEmptyDatabaseThenNothingMore() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        try await TestPostgres.withStore { store, _ in
            #expect(try await store.schemaStatus(migrations) == (0, latest))
            #expect(try await store.migrate(migrations) == Array(1...latest))
            #expect(try await store.schemaStatus(migrations) == (latest, latest))
            #expect(try await store.migrate(migrations) == [], "a second migrate is a no-op")
            let report = try await store.check(migrations)
            #expect(report.version == latest && report.problems.isEmpty, "\(report.problems)")
        }
    }

    @Test func aChangedMigrationIsRefused() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            let original = try String(contentsOf: TestPostgres.projectRoot.appendingPathComponent("Migrations/postgres/0001_schema.sql"),
                                      encoding: .utf8)
            let changed = [try Migration(version: 1, name: "schema", contents: original + "\n-- an edit\n")]
            let error = await clinicError { try await store.migrate(changed) }
            #expect(error?.code == .migrationMismatch && error?.key == .migrationChanged)
            let status = await clinicError { _ = try await store.schemaStatus(changed) }
            #expect(status?.code == .migrationMismatch)
            #expect(try await store.schemaStatus(migrations) == (latest, latest), "nothing changed")
        }
    }

    @Test func aNewerDatabaseIsRefusedAndDownWorks() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        let extra = try Migration(version: latest + 1, name: "extra", contents: """
            -- migrate:up
            CREATE TABLE extra (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text NOT NULL DEFAULT 'a;b');
            -- migrate:down
            DROP TABLE extra;
            """)
        try await TestPostgres.withStore { store, _ in
            #expect(try await store.migrate(migrations + [extra]) == Array(1...latest + 1))
            let error = await clinicError { try await store.migrate(migrations) }
            #expect(error?.code == .databaseTooNew && error?.arguments == [String(latest + 1), String(latest)])
            let status = await clinicError { _ = try await store.schemaStatus(migrations) }
            #expect(status?.code == .databaseTooNew)
            #expect(try await store.migrate(migrations + [extra], to: latest) == [latest + 1])
            #expect(try await store.migrate(migrations, to: 0) == Array((1...latest).reversed()))
            let left = try await store.withConnection { connection in
                try await Self.tables(connection, self.logger)
            }
            #expect(left == ["schema_migrations"], "down removes every table but the migration record")
            #expect(try await store.migrate(migrations) == Array(1...latest), "and up again")
            let range = await clinicError { try await store.migrate(migrations, to: latest + 1) }
            #expect(range?.code == .invalidInput && range?.key == .migrationTargetRange)
        }
    }

    @Test func checkNamesAMissingConstraint() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            try await store.withConnection { connection in
                try await connection.query("ALTER TABLE appointments DROP CONSTRAINT appointments_doctor_no_overlap", logger: self.logger)
                try await connection.query("DROP INDEX messages_dedupe", logger: self.logger)
                try await connection.query("ALTER TABLE sessions DROP CONSTRAINT sessions_client_id_fkey", logger: self.logger)
            }
            let report = try await store.check(migrations)
            #expect(report.problems.contains("constraint appointments_doctor_no_overlap"), "\(report.problems)")
            #expect(report.problems.contains("index messages_dedupe"), "\(report.problems)")
            #expect(report.problems.contains("foreign keys of sessions: 0 of 1"), "\(report.problems)")
            #expect(report.problems.count == 3, "\(report.problems)")
        }
    }

    @Test func twoClientsMigratingAtOnceBothSucceed() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        let (server, url) = try await TestPostgres.freshDatabase()
        let first = try await PostgresStore.open(url, environment: server.environment, logger: logger)
        let second = try await PostgresStore.open(url, environment: server.environment, logger: logger)
        async let a = first.migrate(migrations)
        async let b = second.migrate(migrations)
        let ran = try await [a, b]
        #expect(ran.sorted { $0.count < $1.count } == [[], Array(1...latest)], "one applied it, the other found it done")
        #expect(try await first.schemaStatus(migrations) == (latest, latest))
        await first.shutdown()
        await second.shutdown()
    }

    // MARK: Connecting

    @Test func aWrongPasswordIsTheAuthenticationError() async throws {
        let server = try TestPostgres.server()
        var environment = server.environment
        environment["PGPASSWORD"] = "not-the-password"
        let error = await clinicError { _ = try await PostgresStore.open(server.url, environment: environment, logger: logger) }
        #expect(error?.code == .storeAuthFailed)
        #expect(error?.message(in: .en).contains("not-the-password") == false)
        // No password at all (no PGPASSWORD, no .pgpass): refused the same way.
        environment["PGPASSWORD"] = nil
        let none = await clinicError { _ = try await PostgresStore.open(server.url, environment: environment, logger: logger) }
        #expect(none?.code == .storeAuthFailed)
    }

    @Test func thePasswordFromAPgpassFile() async throws {
        let server = try TestPostgres.server()
        let home = server.folder + "/home-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let file = home + "/.pgpass"
        try "localhost:\(server.port):*:clinic_test:\(server.password)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let store = try await PostgresStore.open(server.url, environment: ["HOME": home], logger: logger)
        let one = try await store.withConnection { connection in
            try await connection.query("SELECT 1", logger: self.logger).collect().first?.decode(Int.self)
        }
        #expect(one == 1)
        await store.shutdown()
    }

    @Test func aMissingDatabaseIsItsOwnError() async throws {
        let server = try TestPostgres.server()
        let error = await clinicError {
            _ = try await PostgresStore.open(server.url(database: "no_such_database"), environment: server.environment, logger: logger)
        }
        #expect(error?.code == .storeDatabaseMissing && error?.arguments.last == "no_such_database")
    }

    /// A database dropped under a running store: its next connection says so
    /// (`store_database_missing`, which a server logs), not `busy` for ever after.
    @Test func aDatabaseDroppedWhileRunningIsSaidNotBusy() async throws {
        try await TestPostgres.withStore { store, server in
            let admin = try await PostgresStore.open(server.url(database: "postgres"), environment: server.environment, logger: logger)
            let drop = PostgresQuery(unsafeSQL: "DROP DATABASE \"\(store.database)\" WITH (FORCE)")
            _ = try await admin.withConnection { connection in try await connection.query(drop, logger: self.logger).collect() }
            await admin.shutdown()
            var codes: [ClinicError.Code?] = []
            // The pool may first hand out its connection that the drop closed (`busy`); the
            // one after is a new connection.
            for _ in 0..<5 where codes.last != .storeDatabaseMissing {
                codes.append(await clinicError {
                    _ = try await store.withConnection { connection in try await connection.query("SELECT 1", logger: self.logger).collect() }
                }?.code)
            }
            #expect(codes.last == .storeDatabaseMissing, "\(codes)")
        }
    }

    @Test func anUnreachableServerIsSaidQuickly() async throws {
        // A closed TCP port (port 1 on loopback: nothing listens there) and a missing socket.
        for text in ["postgresql://clinic_test@127.0.0.1:1/x?connect_timeout=2&sslmode=disable",
                     "postgresql://clinic_test@/x?host=/nonexistent-\(UUID().uuidString.prefix(8))&connect_timeout=2"] {
            let url = try PostgresURL(parsing: text)
            let error = await clinicError { _ = try await PostgresStore.open(url, environment: ["PGPASSWORD": "x"], logger: logger) }
            #expect(error?.code == .storeUnreachable, "\(text): \(String(describing: error))")
        }
    }

    @Test func tlsPerSSLMode() async throws {
        let server = try TestPostgres.server()
        func open(_ query: String, host: String = "localhost") async throws -> PostgresStore {
            let url = try PostgresURL(parsing: "postgresql://clinic_test@\(host):\(server.port)/clinic_test?connect_timeout=5&" + query)
            return try await PostgresStore.open(url, environment: server.environment, logger: logger)
        }
        func usesTLS(_ store: PostgresStore) async throws -> Bool {
            let ssl = try await store.withConnection { connection in
                try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: self.logger)
                    .collect().first?.decode(Bool.self)
            }
            await store.shutdown()
            return ssl == true
        }
        // The chain and the name checked: localhost is the certificate's name.
        #expect(try await usesTLS(try await open("sslmode=verify-full&sslrootcert=" + server.caFile)))
        // 127.0.0.1 is not in the certificate: verify-full refuses, verify-ca does not check names.
        let wrongName = await clinicError {
            _ = try await open("sslmode=verify-full&sslrootcert=" + server.caFile, host: "127.0.0.1")
        }
        #expect(wrongName?.code == .storeUnreachable, "\(String(describing: wrongName))")
        #expect(try await usesTLS(try await open("sslmode=verify-ca&sslrootcert=" + server.caFile, host: "127.0.0.1")))
        // Another CA: refused.
        let otherCA = server.folder + "/other-ca.pem"
        let (status, output) = TestPostgres.run(["/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                                 "-subj", "/CN=other", "-keyout", server.folder + "/other-ca.key", "-out", otherCA])
        #expect(status == 0, "\(output)")
        let untrusted = await clinicError { _ = try await open("sslmode=verify-full&sslrootcert=" + otherCA) }
        #expect(untrusted?.code == .storeUnreachable, "\(String(describing: untrusted))")
        // require and prefer encrypt without checking; disable is plain, which this server refuses over TCP.
        #expect(try await usesTLS(try await open("sslmode=require")))
        #expect(try await usesTLS(try await open("sslmode=prefer")))
        let plain = await clinicError { _ = try await open("sslmode=disable") }
        #expect(plain?.code == .storeAuthFailed, "pg_hba.conf has no plain entry: \(String(describing: plain))")
    }

    // MARK: The constraints against double booking

    @Test func overlappingActiveAppointmentsOfADoctorAreSlotTaken() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            let ids = try await store.transaction { connection, logger in try await Self.doctorAndClients(connection, logger) }
            // 10:00-10:30 booked; 10:15-10:45 for the same doctor overlaps it.
            try await store.transaction { connection, logger in
                try await Self.book(connection, logger, ids, client: ids.clients[0], from: "2030-01-07 10:00Z", to: "2030-01-07 10:30Z")
            }
            let taken = await clinicError {
                try await store.transaction { connection, logger in
                    try await Self.book(connection, logger, ids, client: ids.clients[1], from: "2030-01-07 10:15Z", to: "2030-01-07 10:45Z")
                }
            }
            #expect(taken?.code == .slotTaken)
            // Touching ends do not overlap.
            try await store.transaction { connection, logger in
                try await Self.book(connection, logger, ids, client: ids.clients[1], from: "2030-01-07 10:30Z", to: "2030-01-07 11:00Z")
            }
            // A cancelled appointment blocks nothing.
            try await store.transaction { connection, logger in
                try await connection.query("UPDATE appointments SET status = 'cancelled' WHERE starts_at = '2030-01-07 10:00Z'",
                                           logger: logger)
            }
            try await store.transaction { connection, logger in
                try await Self.book(connection, logger, ids, client: ids.clients[2], from: "2030-01-07 10:00Z", to: "2030-01-07 10:30Z")
            }
            // The same patient at an overlapping time with another doctor: their own overlap.
            let own = await clinicError {
                try await store.transaction { connection, logger in
                    try await Self.book(connection, logger, ids, doctor: ids.otherDoctor, client: ids.clients[2],
                                        from: "2030-01-07 10:10Z", to: "2030-01-07 10:20Z")
                }
            }
            #expect(own?.code == .overlappingAppointment)
            // The raw error: SQLSTATE 23P01 on the named constraint.
            let raw: (String?, String?) = try await store.withConnection { connection in
                do {
                    try await Self.book(connection, self.logger, ids, client: ids.clients[0],
                                        from: "2030-01-07 10:05Z", to: "2030-01-07 10:10Z")
                    return (nil, nil)
                } catch let error as PSQLError {
                    return (error.serverInfo?[.sqlState], error.serverInfo?[.constraintName])
                }
            }
            #expect(raw.0 == "23P01" && raw.1 == "appointments_doctor_no_overlap")
        }
    }

    /// The queries' `AppointmentStatus.activeCondition` and the exclusion constraints' WHERE
    /// name the same statuses (else a query could count what the constraints let overlap).
    @Test func theConstraintsHoldTheActiveStatusesOfTheQueries() async throws {
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(TestPostgres.migrations())
            let definitions = try await store.transaction { connection, logger in
                var found: [String] = []
                let rows = try await connection.query("""
                    SELECT pg_get_constraintdef(oid) FROM pg_constraint
                    WHERE conname IN ('appointments_doctor_no_overlap', 'appointments_client_no_overlap') ORDER BY conname
                    """, logger: logger)
                for try await text in rows.decode(String.self) { found.append(text) }
                return found
            }
            #expect(definitions.count == 2)
            for definition in definitions {
                for status in AppointmentStatus.allCases {
                    #expect(definition.contains("'" + status.rawValue + "'") == status.isActive, "\(status): \(definition)")
                }
            }
        }
    }

    @Test func aTakenLoginIsLoginTaken() async throws {
        let migrations = try TestPostgres.migrations()
        let latest = migrations.last?.version ?? 0
        try await TestPostgres.withStore { store, _ in
            try await store.migrate(migrations)
            _ = try await store.transaction { connection, logger in try await Self.client(connection, logger, "dup") }
            let error = await clinicError {
                _ = try await store.transaction { connection, logger in try await Self.client(connection, logger, "dup") }
            }
            #expect(error?.code == .loginTaken)
        }
    }

    // MARK: Helpers

    struct Ids: Sendable { let clinic: Int64; let department: Int64; let doctor: Int64; let otherDoctor: Int64; let clients: [Int64] }

    static func tables(_ connection: PostgresConnection, _ logger: Logger) async throws -> [String] {
        var names: [String] = []
        let rows = try await connection.query("""
            SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename
            """, logger: logger)
        for try await name in rows.decode(String.self) { names.append(name) }
        return names
    }

    static func single(_ rows: PostgresRowSequence) async throws -> Int64 {
        for try await id in rows.decode(Int64.self) { return id }
        throw ClinicError(.internalError, .internalError, "no row")
    }

    static func client(_ connection: PostgresConnection, _ logger: Logger, _ login: String) async throws -> Int64 {
        try await single(try await connection.query("""
            INSERT INTO clients (login, login_key, password_hash, name, surname, street, house, city, created_at)
            VALUES (\(login), \(login), 'x', 'N', 'S', 'Main', '1', 'Reno', now()) RETURNING id
            """, logger: logger))
    }

    static func doctorAndClients(_ connection: PostgresConnection, _ logger: Logger) async throws -> Ids {
        let clinic = try await single(try await connection.query("""
            INSERT INTO clinics (external_id, name, address, city, city_key, lat, lon, time_zone)
            VALUES ('C1', 'Clinic', 'Street 1', 'Reno', 'reno', 39.5, -119.8, 'America/Los_Angeles') RETURNING id
            """, logger: logger))
        let department = try await single(try await connection.query("""
            INSERT INTO departments (clinic_id, specialization) VALUES (\(clinic), 'cardiology') RETURNING id
            """, logger: logger))
        let doctor = try await single(try await connection.query("""
            INSERT INTO doctors (department_id, name) VALUES (\(department), 'Dr One') RETURNING id
            """, logger: logger))
        let other = try await single(try await connection.query("""
            INSERT INTO doctors (department_id, name) VALUES (\(department), 'Dr Two') RETURNING id
            """, logger: logger))
        var clients: [Int64] = []
        for login in ["p1", "p2", "p3"] { clients.append(try await client(connection, logger, login)) }
        return Ids(clinic: clinic, department: department, doctor: doctor, otherDoctor: other, clients: clients)
    }

    static func book(_ connection: PostgresConnection, _ logger: Logger, _ ids: Ids, doctor: Int64? = nil, client: Int64,
                     from: String, to: String) async throws {
        try await connection.query("""
            INSERT INTO appointments (client_id, clinic_id, department_id, doctor_id, doctor_name, starts_at, ends_at,
                                      created_at, updated_at)
            VALUES (\(client), \(ids.clinic), \(ids.department), \(doctor ?? ids.doctor), 'Dr',
                    \(from)::timestamptz, \(to)::timestamptz, now(), now())
            """, logger: logger)
    }
}
