import ClinicKit
import Foundation
import PostgresNIO

// The geo area of the seam on PostgreSQL (SQLiteTransaction+Geo.swift's behaviour). Text is
// compared bytewise (COLLATE "C"), as SQLite compares it.

extension PostgresTransaction {
    static let cachedGeocodeSQL = "SELECT lat, lon, precision, source FROM geocode_cache WHERE query = $1"
    // SQLite names no order; here by code, for one answer every time.
    static let clinicStatesSQL = "SELECT DISTINCT state COLLATE \"C\" AS state FROM clinics WHERE state <> '' ORDER BY 1"
    static let directoryCitiesSQL = """
        SELECT avg(lat) AS lat, avg(lon) AS lon, state, min(city COLLATE "C") AS city, count(*) AS n FROM clinics
        WHERE city_key = $1 GROUP BY state ORDER BY n DESC, state COLLATE "C"
        """
    static let insertGeocodeSQL = """
        INSERT INTO geocode_cache (query, lat, lon, precision, source, created_at, hits) VALUES ($1, $2, $3, $4, $5, $6, 0)
        ON CONFLICT (query) DO NOTHING
        """
    static let countGeocodeHitSQL = "UPDATE geocode_cache SET hits = hits + 1 WHERE query = $1"

    static func cachedGeocode(_ row: StoredRowValues) throws -> CachedGeocode {
        CachedGeocode(latitude: try row.decode(Double.self, forColumn: "lat"), longitude: try row.decode(Double.self, forColumn: "lon"),
                      precision: try row.decode(String.self, forColumn: "precision"),
                      source: try row.decode(String.self, forColumn: "source"))
    }

    static func directoryCity(_ row: StoredRowValues) throws -> DirectoryCity {
        DirectoryCity(latitude: try row.decode(Double.self, forColumn: "lat"), longitude: try row.decode(Double.self, forColumn: "lon"),
                      state: try row.decode(String?.self, forColumn: "state"), name: try row.decode(String?.self, forColumn: "city"),
                      clinics: try row.decode(Int.self, forColumn: "n"))
    }

    static func binds(_ write: GeocodeCacheWrite) -> (sql: String, binds: [any PostgresBindable]) {
        switch write {
        case .hit(let query): (countGeocodeHitSQL, [query])
        case .insert(let query, let geocode, let at):
            (insertGeocodeSQL, [query, geocode.latitude, geocode.longitude, geocode.precision, geocode.source, at])
        }
    }

    func cachedGeocode(query: String) throws -> CachedGeocode? {
        try row(Self.cachedGeocodeSQL, [query]).map(Self.cachedGeocode)
    }

    func clinicStates() throws -> [String] {
        try values(String.self, Self.clinicStatesSQL)
    }

    func directoryCities(cityKey: String) throws -> [DirectoryCity] {
        try rows(Self.directoryCitiesSQL, [cityKey]).map(Self.directoryCity)
    }

    func insertGeocode(query: String, _ geocode: CachedGeocode, at: Date) throws {
        let write = Self.binds(.insert(query: query, geocode, at: at))
        try execute(write.sql, write.binds)
    }

    func countGeocodeHit(query: String) throws {
        let write = Self.binds(.hit(query: query))
        try execute(write.sql, write.binds)
    }
}

// The awaited geocode reads and write (`GeocodeStore`).
extension PostgresStore {
    /// The parts asked for, in one read-only snapshot.
    public func geocodeFacts(_ ask: GeocodeFactsRequest) async throws -> GeocodeFacts {
        try await readAwaited { tx in
            var facts = GeocodeFacts()
            if let key = ask.cacheKey {
                facts.cached = try await tx.rows(PostgresTransaction.cachedGeocodeSQL, [key]).first.map { try PostgresTransaction.cachedGeocode(try PostgresTransaction.row($0)) }
            }
            if let key = ask.cityKey {
                facts.cities = try await tx.rows(PostgresTransaction.directoryCitiesSQL, [key]).map { try PostgresTransaction.directoryCity(try PostgresTransaction.row($0)) }
            }
            if ask.states {
                facts.states = try await tx.rows(PostgresTransaction.clinicStatesSQL, []).map { try PostgresTransaction.row($0).decode(String.self, forColumn: "state") }
            }
            return facts
        }
    }

    public func recordGeocode(_ write: GeocodeCacheWrite) async throws {
        let sent = statementsSent, statement = PostgresTransaction.binds(write)
        try await transaction { connection, logger in
            _ = try await AwaitedConnection(connection: connection, logger: logger, sent: sent).rows(statement.sql, statement.binds)
        }
    }
}
