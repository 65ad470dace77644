import Foundation
import GRDB

/// How the models map to their tables: snake_case columns and instants as whole UTC seconds
/// since 1970 (INTEGER), so that the unique indexes and range queries on them compare numbers.
/// The mapping is written out (`init(row:)`, `encode(to:)`) rather than derived through
/// Codable: booking reads several records per transaction, and derived decoding with key
/// conversion was a third of its CPU time (docs/BENCHMARKS.md).
public protocol StoredRecord: FetchableRecord, MutablePersistableRecord {}

extension Date {
    init(seconds: Int64) { self.init(timeIntervalSince1970: TimeInterval(seconds)) }
    var seconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }
}

extension Client {
    public init(row: Row) throws {
        let table = "clients"
        id = try row.value("id", in: table); login = try row.value("login", in: table)
        loginKey = try row.value("login_key", in: table); passwordHash = try row.value("password_hash", in: table)
        name = try row.value("name", in: table); surname = try row.value("surname", in: table)
        street = try row.value("street", in: table); house = try row.value("house", in: table)
        city = try row.value("city", in: table)
        lat = try row.value("lat", in: table); lon = try row.value("lon", in: table)
        homeClinicId = try row.value("home_clinic_id", in: table)
        preferredLanguage = try row.value("preferred_language", in: table)
        privacyAcceptedAt = try row.optionalInstant("privacy_accepted_at", in: table)
        privacyVersion = try row.value("privacy_version", in: table); createdAt = try row.instant("created_at", in: table)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["login"] = login; container["login_key"] = loginKey
        container["password_hash"] = passwordHash; container["name"] = name; container["surname"] = surname
        container["street"] = street; container["house"] = house; container["city"] = city; container["lat"] = lat
        container["lon"] = lon; container["home_clinic_id"] = homeClinicId; container["preferred_language"] = preferredLanguage
        container["privacy_accepted_at"] = privacyAcceptedAt?.seconds; container["privacy_version"] = privacyVersion
        container["created_at"] = createdAt.seconds
    }
}

extension Clinic {
    public init(row: Row) throws {
        let table = "clinics"
        id = try row.value("id", in: table); externalId = try row.value("external_id", in: table)
        name = try row.value("name", in: table); address = try row.value("address", in: table)
        city = try row.value("city", in: table)
        cityKey = try row.value("city_key", in: table); state = try row.value("state", in: table)
        zip = try row.value("zip", in: table); description = try row.value("description", in: table)
        category = try row.value("category", in: table); lat = try row.value("lat", in: table)
        lon = try row.value("lon", in: table); isPediatric = try row.value("is_pediatric", in: table)
        isHospital = try row.value("is_hospital", in: table); timeZone = try row.value("time_zone", in: table)
        phone = try row.value("phone", in: table); website = try row.value("website", in: table)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["external_id"] = externalId; container["name"] = name; container["address"] = address
        container["city"] = city; container["city_key"] = cityKey; container["state"] = state; container["zip"] = zip
        container["description"] = description; container["category"] = category; container["lat"] = lat; container["lon"] = lon
        container["is_pediatric"] = isPediatric; container["is_hospital"] = isHospital; container["time_zone"] = timeZone
        container["phone"] = phone; container["website"] = website
    }
}

extension Department {
    public init(row: Row) throws {
        let table = "departments"
        id = try row.value("id", in: table); clinicId = try row.value("clinic_id", in: table)
        specialization = try row.value("specialization", in: table); isDemo = try row.value("is_demo", in: table)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["clinic_id"] = clinicId; container["specialization"] = specialization
        container["is_demo"] = isDemo
    }
}

extension Doctor {
    public init(row: Row) throws {
        let table = "doctors"
        id = try row.value("id", in: table); departmentId = try row.value("department_id", in: table)
        name = try row.value("name", in: table); isDemo = try row.value("is_demo", in: table)
        isActive = try row.hasColumn("is_active") ? row.value("is_active", in: table) : true
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["department_id"] = departmentId; container["name"] = name; container["is_demo"] = isDemo
    }
}

extension WorkingHours {
    public init(row: Row) throws {
        let table = "working_hours"
        id = try row.value("id", in: table); doctorId = try row.value("doctor_id", in: table)
        weekday = try row.value("weekday", in: table); startMinute = try row.value("start_minute", in: table)
        endMinute = try row.value("end_minute", in: table); slotMinutes = try row.value("slot_minutes", in: table)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["weekday"] = weekday
        container["start_minute"] = startMinute; container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}

extension Appointment {
    public init(row: Row) throws {
        let table = "appointments"
        id = try row.value("id", in: table); clientId = try row.value("client_id", in: table)
        clinicId = try row.value("clinic_id", in: table); departmentId = try row.value("department_id", in: table)
        doctorId = try row.value("doctor_id", in: table); doctorName = try row.value("doctor_name", in: table)
        startsAt = try row.instant("starts_at", in: table)
        endsAt = try row.instant("ends_at", in: table); notes = try row.value("notes", in: table)
        createdAt = try row.instant("created_at", in: table); updatedAt = try row.instant("updated_at", in: table)
        visitTypeId = try row.hasColumn("visit_type_id") ? row.value("visit_type_id", in: table) : nil
        let text: String = try row.value("status", in: table)
        guard let status = AppointmentStatus(rawValue: text) else {
            throw ClinicError(.storage, .storageFailure, "unknown appointment status '\(text)'")
        }
        self.status = status
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["client_id"] = clientId; container["clinic_id"] = clinicId
        container["department_id"] = departmentId; container["doctor_id"] = doctorId; container["doctor_name"] = doctorName
        container["starts_at"] = startsAt.seconds; container["ends_at"] = endsAt.seconds; container["status"] = status.rawValue
        container["notes"] = notes; container["created_at"] = createdAt.seconds; container["updated_at"] = updatedAt.seconds
        // Only with a visit type: the column is migration 12's.
        if let visitTypeId { container["visit_type_id"] = visitTypeId }
    }
}

extension AppointmentEvent {
    public init(row: Row) throws {
        let table = "appointment_events"
        id = try row.value("id", in: table); appointmentId = try row.value("appointment_id", in: table)
        event = try row.value("event", in: table); actor = try row.value("actor", in: table)
        at = try row.instant("at", in: table); startsAt = try row.optionalInstant("starts_at", in: table)
        doctorId = try row.value("doctor_id", in: table)
        reason = try row.value("reason", in: table)
        staffId = try row.hasColumn("staff_id") ? row.value("staff_id", in: table) : nil
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["appointment_id"] = appointmentId; container["event"] = event; container["actor"] = actor
        container["at"] = at.seconds; container["starts_at"] = startsAt?.seconds; container["doctor_id"] = doctorId
        container["reason"] = reason
        // Only with a staff account: the column is migration 11's.
        if let staffId { container["staff_id"] = staffId }
    }
}

extension WorkingException {
    public init(row: Row) throws {
        let table = "working_exceptions"
        id = try row.value("id", in: table); doctorId = try row.value("doctor_id", in: table)
        day = try row.value("day", in: table); startMinute = try row.value("start_minute", in: table)
        endMinute = try row.value("end_minute", in: table); slotMinutes = try row.value("slot_minutes", in: table)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["day"] = day; container["start_minute"] = startMinute
        container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}
