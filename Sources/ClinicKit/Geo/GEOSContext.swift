import CGEOS
import Foundation

/// Owns one GEOS context handle (reentrant API), frees it in `deinit`, and collects the
/// messages GEOS reports through the context's error handler. After GEOSwift's GEOSContext.
final class GEOSContext {
    let handle: GEOSContextHandle_t
    private(set) var errors: [String] = []

    /// The tree must copy each envelope on insertion (GEOS 3.9 and later do), since the point
    /// geometries are freed right after.
    static let minimumVersion = (3, 9)

    init() throws {
        let version = String(cString: GEOSversion()).split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard version.count >= 2, (version[0], version[1]) >= Self.minimumVersion else {
            throw ClinicError(.internalError, .internalError, "GEOS \(String(cString: GEOSversion())) is older than 3.9")
        }
        guard let handle = GEOS_init_r() else { throw ClinicError(.internalError, .internalError, "GEOS_init_r failed") }
        self.handle = handle
        GEOSContext_setErrorMessageHandler_r(handle, { message, userdata in
            guard let message, let userdata else { return }
            let context = Unmanaged<GEOSContext>.fromOpaque(userdata).takeUnretainedValue()
            context.errors.append(String(cString: message))
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        GEOS_finish_r(handle)
    }

    /// An error carrying the last GEOS message, for a call that returned nothing.
    func failure(_ call: String) -> ClinicError {
        ClinicError(.internalError, .internalError, "\(call): \(errors.last ?? "GEOS reported no message")")
    }
}

/// A GEOS STR-tree of points or boxes, each item an index into the caller's arrays. Owns the
/// tree; the geometries are freed as soon as they are inserted (the tree keeps a copy of each
/// envelope). Queries are serialised: a GEOS context is not to be used by two threads at once,
/// and the tree builds itself on its first query.
final class EnvelopeTree: @unchecked Sendable {
    private let context: GEOSContext
    private let tree: OpaquePointer
    private let lock = NSLock()
    let count: Int

    /// Inserts the points (longitude as x, latitude as y) in order; item i is index i.
    convenience init(longitudes: [Double], latitudes: [Double]) throws {
        precondition(longitudes.count == latitudes.count)
        try self.init(count: longitudes.count, call: "GEOSGeom_createPointFromXY_r") { handle, index in
            GEOSGeom_createPointFromXY_r(handle, longitudes[index], latitudes[index])
        }
    }

    /// Inserts the boxes in order; item i is index i.
    convenience init(boxes: [Geodesy.Box]) throws {
        try self.init(count: boxes.count, call: "GEOSGeom_createRectangle_r") { handle, index in
            GEOSGeom_createRectangle_r(handle, boxes[index].minLon, boxes[index].minLat, boxes[index].maxLon, boxes[index].maxLat)
        }
    }

    private init(count: Int, call: String, geometry: (GEOSContextHandle_t, Int) -> OpaquePointer?) throws {
        context = try GEOSContext()
        guard let tree = GEOSSTRtree_create_r(context.handle, 10) else { throw context.failure("GEOSSTRtree_create_r") }
        self.tree = tree
        self.count = count
        for index in 0..<count {
            guard let item = geometry(context.handle, index) else { throw context.failure(call) }
            GEOSSTRtree_insert_r(context.handle, tree, item, UnsafeMutableRawPointer(bitPattern: index + 1))
            GEOSGeom_destroy_r(context.handle, item)
        }
        // Build now (an STR-tree is packed on its first query), not during a user's first search.
        _ = try query(Geodesy.Box(minLon: 0, minLat: 0, maxLon: 0, maxLat: 0), into: [])
    }

    deinit {
        GEOSSTRtree_destroy_r(context.handle, tree)
    }

    private final class Collector {
        var items: [Int] = []
    }

    /// Appends the indexes of the items whose envelope meets the box (edges included) to `found`.
    func query(_ box: Geodesy.Box, into found: [Int]) throws -> [Int] {
        try lock.withLock {
            guard let rectangle = GEOSGeom_createRectangle_r(context.handle, box.minLon, box.minLat, box.maxLon, box.maxLat)
            else { throw context.failure("GEOSGeom_createRectangle_r") }
            defer { GEOSGeom_destroy_r(context.handle, rectangle) }
            let collector = Collector()
            collector.items = found
            withExtendedLifetime(collector) {
                GEOSSTRtree_query_r(context.handle, tree, rectangle, { item, userdata in
                    guard let userdata else { return }
                    let collector = Unmanaged<Collector>.fromOpaque(userdata).takeUnretainedValue()
                    collector.items.append(Int(bitPattern: item) - 1)
                }, Unmanaged.passUnretained(collector).toOpaque())
            }
            return collector.items
        }
    }
}
