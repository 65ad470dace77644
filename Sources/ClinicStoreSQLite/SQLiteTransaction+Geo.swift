import ClinicKit
import CSQLite
import Foundation
import GRDB

// The geo area of the seam on SQLite.

extension SQLiteTransaction {
    func cachedGeocode(query: String) throws -> CachedGeocode? {
        try Row.fetchOne(db, sql: "SELECT lat, lon, precision, source FROM geocode_cache WHERE query = ?", arguments: [query]).map { row in
            CachedGeocode(latitude: try row.value("lat", in: "geocode_cache"), longitude: try row.value("lon", in: "geocode_cache"),
                          precision: try row.value("precision", in: "geocode_cache"), source: try row.value("source", in: "geocode_cache"))
        }
    }

    func clinicStates() throws -> [String] {
        try String.fetchAll(db, sql: "SELECT DISTINCT state FROM clinics WHERE state <> ''")
    }

    /// A stored number as a Double; nil for text or a blob (a value edited in past the checks).
    /// A column of the row a statement is on, when it holds a number.
    static func number(_ statement: OpaquePointer?, _ index: Int32) -> Double? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_FLOAT: sqlite3_column_double(statement, index)
        case SQLITE_INTEGER: Double(sqlite3_column_int64(statement, index))
        default: nil
        }
    }

    static func number(_ value: DatabaseValue) -> Double? {
        switch value.storage {
        case .double(let number): number
        case .int64(let number): Double(number)
        default: nil
        }
    }

    func directoryCities(cityKey: String) throws -> [DirectoryCity] {
        try Row.fetchAll(db, sql: """
            SELECT avg(lat) AS lat, avg(lon) AS lon, state, min(city) AS city, count(*) AS n FROM clinics
            WHERE city_key = ? GROUP BY state ORDER BY n DESC, state
            """, arguments: [cityKey]).map { row in
            DirectoryCity(latitude: try row.value("lat", in: "clinics", key: "city"), longitude: try row.value("lon", in: "clinics", key: "city"),
                          state: try row.value("state", in: "clinics", key: "city"), name: try row.value("city", in: "clinics", key: "city"),
                          clinics: try row.value("n", in: "clinics", key: "city"))
        }
    }

    func insertGeocode(query: String, _ geocode: CachedGeocode, at: Date) throws {
        try db.execute(sql: """
            INSERT INTO geocode_cache (query, lat, lon, precision, source, created_at, hits) VALUES (?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT (query) DO NOTHING
            """, arguments: [query, geocode.latitude, geocode.longitude, geocode.precision, geocode.source, at.seconds])
    }

    func countGeocodeHit(query: String) throws {
        try db.execute(sql: "UPDATE geocode_cache SET hits = hits + 1 WHERE query = ?", arguments: [query])
    }
}
