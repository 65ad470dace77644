import Foundation

/// The nearest clinics to a point, exactly by great-circle distance (see `GeoIndex`). Built
/// once per process from the clinics table; a later change to the table is seen by the next
/// process (or the next `ClinicSystem`).
public final class NearestClinicFinder: Sendable {
    let index: GeoIndex
    let isPediatric: [Bool]
    let isHospital: [Bool]

    public struct Filter: Sendable, Equatable {
        public var pediatricOnly = false
        public var hospitalOnly = false
        /// Only these clinics (e.g. those with a department of some specialization).
        public var clinicIds: Set<Int64>?
        /// Only clinics at most this far, in metres.
        public var withinMeters: Double?

        public init(pediatricOnly: Bool = false, hospitalOnly: Bool = false, clinicIds: Set<Int64>? = nil,
                    withinMeters: Double? = nil) {
            self.pediatricOnly = pediatricOnly
            self.hospitalOnly = hospitalOnly
            self.clinicIds = clinicIds
            self.withinMeters = withinMeters
        }
    }

    public struct Match: Equatable, Sendable {
        public let clinicId: Int64
        public let distance: Double
    }

    init(ids: [Int64], coordinates: [Coordinate], isPediatric: [Bool], isHospital: [Bool]) throws {
        index = try GeoIndex(coordinates: coordinates, ids: ids)
        self.isPediatric = isPediatric
        self.isHospital = isHospital
    }

    public static func load(_ tx: any StoreReading) throws -> NearestClinicFinder {
        try ClinicController.finder(try tx.clinicPoints())
    }

    public var count: Int { index.count }

    /// The `limit` nearest clinics that pass the filter, nearest first (ties by id).
    public func nearest(to point: Coordinate, limit: Int = 1, filter: Filter = Filter()) throws -> [Match] {
        try index.nearest(to: point, k: limit, maximumDistance: filter.withinMeters) { position in
            if filter.pediatricOnly && !isPediatric[position] { return false }
            if filter.hospitalOnly && !isHospital[position] { return false }
            if let allowed = filter.clinicIds, !allowed.contains(index.ids[position]) { return false }
            return true
        }.map { Match(clinicId: $0.id, distance: $0.distance) }
    }
}
