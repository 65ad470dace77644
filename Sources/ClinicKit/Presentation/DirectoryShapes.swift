import Foundation

// The directory's shapes: clinics, departments, doctors, places.

public struct ClinicJSON: Encodable, Sendable {
    public let id: Int64
    public let name: String
    public let address: String
    public let city: String
    public let lat: Double
    public let lon: Double
    public let isPediatric: Bool
    public let isHospital: Bool
    public let timeZone: String

    public init(_ clinic: Clinic) {
        id = clinic.id ?? 0; name = clinic.name; address = clinic.address; city = clinic.city
        lat = clinic.lat; lon = clinic.lon; isPediatric = clinic.isPediatric; isHospital = clinic.isHospital
        timeZone = clinic.timeZone
    }
}

public struct ClinicDetailJSON: Encodable, Sendable {
    public let id: Int64
    public let externalId: String
    public let name: String
    public let address: String
    public let city: String
    public let state: String
    public let zip: String
    public let lat: Double
    public let lon: Double
    public let isPediatric: Bool
    public let isHospital: Bool
    public let timeZone: String
    public let category: String
    public let description: String
    public let phone: String
    public let website: String
    public let departments: [DepartmentJSON]

    public init(_ clinic: Clinic, departments: [Department], language: Language) {
        id = clinic.id ?? 0; externalId = clinic.externalId; name = clinic.name; address = clinic.address
        city = clinic.city; state = clinic.state; zip = clinic.zip; lat = clinic.lat; lon = clinic.lon
        isPediatric = clinic.isPediatric; isHospital = clinic.isHospital; timeZone = clinic.timeZone
        category = clinic.category; description = clinic.description; phone = clinic.phone; website = clinic.website
        self.departments = departments.map { DepartmentJSON($0, language: language) }
    }
}

public struct DepartmentJSON: Encodable, Sendable {
    public let id: Int64
    public let clinicId: Int64
    public let specialization: String
    public let displayName: String
    public let isDemo: Bool

    public init(_ department: Department, language: Language) {
        id = department.id ?? 0; clinicId = department.clinicId; specialization = department.specialization
        displayName = Specialization.displayName(department.specialization, language); isDemo = department.isDemo
    }
}

public struct DoctorJSON: Encodable, Sendable {
    public struct Hours: Encodable, Sendable {
        public let weekday: Int
        public let start: String
        public let end: String
        public let slotMinutes: Int

        public init(_ hours: WorkingHours) {
            weekday = hours.weekday; start = Shapes.minutesText(hours.startMinute); end = Shapes.minutesText(hours.endMinute)
            slotMinutes = hours.slotMinutes
        }
    }
    public let id: Int64
    public let departmentId: Int64
    public let name: String
    public let hours: [Hours]

    public init(_ doctor: Doctor, hours: [WorkingHours]) {
        id = doctor.id ?? 0; departmentId = doctor.departmentId; name = doctor.name
        self.hours = hours.map(Hours.init)
    }
}

/// A clinic as in `ClinicJSON`, plus `distanceMeters` (to 0.1 m), in one flat object.
public struct NearbyClinicJSON: Encodable, Sendable {
    public let clinic: ClinicJSON
    public let distanceMeters: Double

    public init(_ nearby: NearbyClinic) {
        clinic = ClinicJSON(nearby.clinic)
        distanceMeters = (nearby.distance * 10).rounded() / 10
    }

    private enum Keys: String, CodingKey { case distanceMeters }

    public func encode(to encoder: Encoder) throws {
        try clinic.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(distanceMeters, forKey: .distanceMeters)
    }
}

/// `geocode --json`: where the query is, and what else it may mean. Unknown fields are null.
public struct GeocodeJSON: Encodable, Sendable {
    public let result: GeocodeResult

    public init(_ result: GeocodeResult) { self.result = result }

    struct Alternative: Encodable {
        let candidate: GeocodeCandidate
        enum Keys: String, CodingKey { case name, admin1, country, timeZone, lat, lon, precision, hint }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(candidate.name, forKey: .name)
            try container.encode(candidate.admin1, forKey: .admin1)
            try container.encode(candidate.country, forKey: .country)
            try container.encode(candidate.timeZone, forKey: .timeZone)
            try container.encode(candidate.coordinate.latitude, forKey: .lat)
            try container.encode(candidate.coordinate.longitude, forKey: .lon)
            try container.encode(candidate.precision, forKey: .precision)
            try container.encode(candidate.hint, forKey: .hint)
        }
    }

    enum Keys: String, CodingKey {
        case query, lat, lon, precision, source, cached, name, admin1, country, timeZone, hint, alternatives
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(result.query, forKey: .query)
        try container.encode(result.coordinate.latitude, forKey: .lat)
        try container.encode(result.coordinate.longitude, forKey: .lon)
        try container.encode(result.precision, forKey: .precision)
        try container.encode(result.source, forKey: .source)
        try container.encode(result.cached, forKey: .cached)
        try container.encode(result.placeName, forKey: .name)
        try container.encode(result.admin1, forKey: .admin1)
        try container.encode(result.country, forKey: .country)
        try container.encode(result.timeZone, forKey: .timeZone)
        try container.encode(result.hint, forKey: .hint)
        try container.encode(result.alternatives.map(Alternative.init), forKey: .alternatives)
    }
}

/// An upcoming appointment whose clinic's time zone changed after it was booked.
public struct ZoneChangeJSON: Encodable, Sendable {
    public let appointmentId: Int64; public let clinicId: Int64; public let start: String; public let oldZone: String
    public let newZone: String

    public init(_ change: ZoneChangedAppointment) {
        appointmentId = change.appointmentId; clinicId = change.clinicId; start = DateText.iso8601(change.start)
        oldZone = change.oldZone; newZone = change.newZone
    }
}
