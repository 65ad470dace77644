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
        id = row["id"]; login = row["login"]; loginKey = row["login_key"]; passwordHash = row["password_hash"]
        name = row["name"]; surname = row["surname"]; street = row["street"]; house = row["house"]; city = row["city"]
        lat = row["lat"]; lon = row["lon"]; homeClinicId = row["home_clinic_id"]; preferredLanguage = row["preferred_language"]
        privacyAcceptedAt = (row["privacy_accepted_at"] as Int64?).map(Date.init(seconds:))
        privacyVersion = row["privacy_version"]; createdAt = Date(seconds: row["created_at"])
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
        id = row["id"]; externalId = row["external_id"]; name = row["name"]; address = row["address"]; city = row["city"]
        cityKey = row["city_key"]; state = row["state"]; zip = row["zip"]; description = row["description"]
        category = row["category"]; lat = row["lat"]; lon = row["lon"]; isPediatric = row["is_pediatric"]
        isHospital = row["is_hospital"]; timeZone = row["time_zone"]; phone = row["phone"]; website = row["website"]
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
        id = row["id"]; clinicId = row["clinic_id"]; specialization = row["specialization"]; isDemo = row["is_demo"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["clinic_id"] = clinicId; container["specialization"] = specialization
        container["is_demo"] = isDemo
    }
}

extension Doctor {
    public init(row: Row) throws {
        id = row["id"]; departmentId = row["department_id"]; name = row["name"]; isDemo = row["is_demo"]
        isActive = row.hasColumn("is_active") ? row["is_active"] : true
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["department_id"] = departmentId; container["name"] = name; container["is_demo"] = isDemo
    }
}

extension WorkingHours {
    public init(row: Row) throws {
        id = row["id"]; doctorId = row["doctor_id"]; weekday = row["weekday"]; startMinute = row["start_minute"]
        endMinute = row["end_minute"]; slotMinutes = row["slot_minutes"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["weekday"] = weekday
        container["start_minute"] = startMinute; container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}

extension Appointment {
    public init(row: Row) throws {
        id = row["id"]; clientId = row["client_id"]; clinicId = row["clinic_id"]; departmentId = row["department_id"]
        doctorId = row["doctor_id"]; doctorName = row["doctor_name"]; startsAt = Date(seconds: row["starts_at"])
        endsAt = Date(seconds: row["ends_at"]); notes = row["notes"]
        createdAt = Date(seconds: row["created_at"]); updatedAt = Date(seconds: row["updated_at"])
        visitTypeId = row.hasColumn("visit_type_id") ? row["visit_type_id"] : nil
        let text: String = row["status"]
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
        id = row["id"]; appointmentId = row["appointment_id"]; event = row["event"]; actor = row["actor"]
        at = Date(seconds: row["at"]); startsAt = (row["starts_at"] as Int64?).map(Date.init(seconds:)); doctorId = row["doctor_id"]
        reason = row["reason"]
        staffId = row.hasColumn("staff_id") ? row["staff_id"] : nil
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
        id = row["id"]; doctorId = row["doctor_id"]; day = row["day"]; startMinute = row["start_minute"]
        endMinute = row["end_minute"]; slotMinutes = row["slot_minutes"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["day"] = day; container["start_minute"] = startMinute
        container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}
