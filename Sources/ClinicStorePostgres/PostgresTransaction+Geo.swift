import ClinicKit
import Foundation

// The geo area of the seam on PostgreSQL (SQLiteTransaction+Geo.swift's behaviour). Text is
// compared bytewise (COLLATE "C"), as SQLite compares it.

extension PostgresTransaction {
    func cachedGeocode(query: String) throws -> CachedGeocode? {
        try row("SELECT lat, lon, precision, source FROM geocode_cache WHERE query = $1", [query]).map { row in
            CachedGeocode(latitude: try row.decode(Double.self, forColumn: "lat"), longitude: try row.decode(Double.self, forColumn: "lon"),
                          precision: try row.decode(String.self, forColumn: "precision"),
                          source: try row.decode(String.self, forColumn: "source"))
        }
    }

    func clinicStates() throws -> [String] {
        // SQLite names no order; here by code, for one answer every time.
        try values(String.self, "SELECT DISTINCT state COLLATE \"C\" AS state FROM clinics WHERE state <> '' ORDER BY 1")
    }

    func directoryCities(cityKey: String) throws -> [DirectoryCity] {
        try rows("""
            SELECT avg(lat) AS lat, avg(lon) AS lon, state, min(city COLLATE "C") AS city, count(*) AS n FROM clinics
            WHERE city_key = $1 GROUP BY state ORDER BY n DESC, state COLLATE "C"
            """, [cityKey]).map { row in
            DirectoryCity(latitude: try row.decode(Double.self, forColumn: "lat"), longitude: try row.decode(Double.self, forColumn: "lon"),
                          state: try row.decode(String?.self, forColumn: "state"), name: try row.decode(String?.self, forColumn: "city"),
                          clinics: try row.decode(Int.self, forColumn: "n"))
        }
    }

    func insertGeocode(query: String, _ geocode: CachedGeocode, at: Date) throws {
        try execute("""
            INSERT INTO geocode_cache (query, lat, lon, precision, source, created_at, hits) VALUES ($1, $2, $3, $4, $5, $6, 0)
            ON CONFLICT (query) DO NOTHING
            """, [query, geocode.latitude, geocode.longitude, geocode.precision, geocode.source, at])
    }

    func countGeocodeHit(query: String) throws {
        try execute("UPDATE geocode_cache SET hits = hits + 1 WHERE query = $1", [query])
    }
}
