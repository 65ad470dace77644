import CGEOS
import Foundation

/// The IANA time zone at a point, from time-zone boundary polygons (Data/timezones.db, derived
/// from timezone-boundary-builder by scripts/derive-timezones.py; see docs/DATA.md).
///
/// The file holds single polygons, cut into pieces where they are large, each with its
/// envelope. The envelopes of all rows (a few thousand) go into an STR-tree when the finder is
/// made; a polygon's WKB is read, parsed and prepared only when a point falls in its envelope,
/// and kept. So one look-up reads a few small rows, and a whole directory's worth prepares each
/// piece once. The U.S. layer (full resolution) is asked before the world layer (simplified), so
/// a point near a border simplified on the other side still gets its U.S. zone.
///
/// A point inside no polygon (a sliver between simplified borders, or the open sea where the
/// data has no ocean zone) gets the zone of the nearest polygon. A point in an ocean zone
/// (`Etc/GMT±N`) within `coastReach` of a land zone gets the land zone: a coastal clinic
/// offshore of a simplified coastline is on land.
///
/// Every GEOS object here has one owner: the tree owns its envelopes, the finder owns each
/// parsed geometry and its prepared form, under one lock with their context.
public final class ZoneFinder: @unchecked Sendable {
    struct Piece {
        let id: Int64
        let zone: String
        let isUS: Bool
        let box: Geodesy.Box
    }

    let pieces: [Piece]
    let tree: EnvelopeTree
    private let file: DataFile
    private let context: GEOSContext
    private let reader: OpaquePointer
    private let lock = NSLock()
    /// Parsed polygons and their prepared forms, by position in `pieces`.
    private var loaded: [Int: (geometry: OpaquePointer, prepared: OpaquePointer)] = [:]

    /// How far (degrees, about 11 km) a point in an ocean zone looks for a land zone.
    static let coastReach = 0.1

    init(file path: String) throws {
        file = try DataFile(path: path)
        do {
            pieces = try file.read { db in
                try db.rows("""
                    SELECT id, tzid, layer, min_lon, min_lat, max_lon, max_lat FROM zone_polygon ORDER BY id
                    """).map { row in
                    Piece(id: try row.decode(Int64.self, forColumn: "id"), zone: try row.decode(String.self, forColumn: "tzid"),
                          isUS: try row.decode(String.self, forColumn: "layer") == "us",
                          box: Geodesy.Box(minLon: try row.decode(Double.self, forColumn: "min_lon"),
                                           minLat: try row.decode(Double.self, forColumn: "min_lat"),
                                           maxLon: try row.decode(Double.self, forColumn: "max_lon"),
                                           maxLat: try row.decode(Double.self, forColumn: "max_lat")))
                }
            }
        } catch let error as ClinicError {
            throw error
        } catch {
            throw ClinicError(.storage, .gazetteerMissing, path + " (" + String(describing: error) + ")")
        }
        guard !pieces.isEmpty else { throw ClinicError(.storage, .gazetteerMissing, path) }
        tree = try EnvelopeTree(boxes: pieces.map(\.box))
        context = try GEOSContext()
        guard let reader = GEOSWKBReader_create_r(context.handle) else { throw context.failure("GEOSWKBReader_create_r") }
        self.reader = reader
    }

    deinit {
        for (geometry, prepared) in loaded.values {
            GEOSPreparedGeom_destroy_r(context.handle, prepared)
            GEOSGeom_destroy_r(context.handle, geometry)
        }
        GEOSWKBReader_destroy_r(context.handle, reader)
    }

    private static let shared = LockedBox<[String: ZoneFinder]>([:])

    /// The finder of a Data/ folder, made once per process.
    public static func load(from data: URL) throws -> ZoneFinder {
        try DataFile.shared(shared, data.appendingPathComponent("timezones.db").path, ZoneFinder.init(file:))
    }

    /// The zone at a point.
    public func zone(at point: Coordinate) throws -> String {
        let box = Geodesy.Box(minLon: point.longitude, minLat: point.latitude, maxLon: point.longitude, maxLat: point.latitude)
        let candidates = try tree.query(box, into: []).sorted { (pieces[$0].isUS ? 0 : 1, $0) < (pieces[$1].isUS ? 0 : 1, $1) }
        return try lock.withLock {
            guard let geometry = GEOSGeom_createPointFromXY_r(context.handle, point.longitude, point.latitude) else {
                throw context.failure("GEOSGeom_createPointFromXY_r")
            }
            defer { GEOSGeom_destroy_r(context.handle, geometry) }
            var ocean: String?
            for index in candidates {
                // Intersects, not contains: a point on a shared border belongs to the first piece.
                guard try GEOSPreparedIntersects_r(context.handle, polygon(index).prepared, geometry) == 1 else { continue }
                guard pieces[index].zone.hasPrefix("Etc/") else { return pieces[index].zone }
                ocean = ocean ?? pieces[index].zone
            }
            if let ocean {
                return try nearest(to: point, geometry, within: Self.coastReach, land: true) ?? ocean
            }
            return try nearest(to: point, geometry, within: 360, land: false) ?? Self.byLongitude(point.longitude)
        }
    }

    /// The zone of the nearest piece (planar distance in degrees) within `reach` degrees;
    /// with `land`, of zones that are not ocean zones. The box grows until it reaches.
    private func nearest(to point: Coordinate, _ geometry: OpaquePointer, within reach: Double, land: Bool) throws -> String? {
        var radius = min(0.05, reach)
        while true {
            let box = Geodesy.Box(minLon: max(point.longitude - radius, -180), minLat: max(point.latitude - radius, -90),
                                  maxLon: min(point.longitude + radius, 180), maxLat: min(point.latitude + radius, 90))
            var best: (distance: Double, index: Int)?
            for index in try tree.query(box, into: []) where !land || !pieces[index].zone.hasPrefix("Etc/") {
                var distance = 0.0
                guard GEOSDistance_r(context.handle, try polygon(index).geometry, geometry, &distance) == 1 else {
                    throw context.failure("GEOSDistance_r")
                }
                if distance <= radius, best.map({ (distance, index) < ($0.distance, $0.index) }) ?? true {
                    best = (distance, index)
                }
            }
            if let best { return pieces[best.index].zone }
            if radius >= reach { return nil }
            radius = min(reach, radius * 4)
        }
    }

    /// A piece's polygon and prepared form, read and parsed on first use. Called under `lock`.
    private func polygon(_ index: Int) throws -> (geometry: OpaquePointer, prepared: OpaquePointer) {
        if let done = loaded[index] { return done }
        let blob = try file.read { db in
            try db.value(Data.self, "SELECT wkb FROM zone_polygon WHERE id = ?", [pieces[index].id])
        }
        guard let blob else { throw ClinicError(.storage, .gazetteerMissing, "zone polygon \(pieces[index].id)") }
        let parsed = blob.withUnsafeBytes { bytes in
            GEOSWKBReader_read_r(context.handle, reader, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
        }
        guard let geometry = parsed else { throw context.failure("GEOSWKBReader_read_r") }
        guard let prepared = GEOSPrepare_r(context.handle, geometry) else {
            GEOSGeom_destroy_r(context.handle, geometry)
            throw context.failure("GEOSPrepare_r")
        }
        loaded[index] = (geometry, prepared)
        return (geometry, prepared)
    }

    /// A whole-hour zone from the longitude, for a point with no polygon anywhere near (an
    /// empty file). Etc/GMT zones have inverted signs: Etc/GMT+5 is UTC−5.
    static func byLongitude(_ longitude: Double) -> String {
        let hours = Int((longitude / 15).rounded())
        if hours == 0 { return "Etc/UTC" }
        return hours > 0 ? "Etc/GMT-\(min(hours, 12))" : "Etc/GMT+\(min(-hours, 12))"
    }

    /// Every piece with its zone, for tests: (zone, is U.S., the polygon's WKB).
    func allPieces() throws -> [(zone: String, isUS: Bool, wkb: Data)] {
        try file.read { db in
            try db.rows("SELECT tzid, layer, wkb FROM zone_polygon ORDER BY id").map { row in
                (try row.decode(String.self, forColumn: "tzid"), try row.decode(String.self, forColumn: "layer") == "us",
                 try row.decode(Data.self, forColumn: "wkb"))
            }
        }
    }
}
