import ClinicKit
import Foundation
import GRDB

// The models as GRDB records of this store: read through ClinicKit's one mapping of each table
// (`init(row:)` over a `StoredRow`, here a GRDB row read in place: `SQLiteRow`), written by the
// column lists below. Instants are stored as whole UTC seconds (INTEGER).

/// A model stored as a row of its own table: read through ClinicKit's mapping (`StoredModel`),
/// its id taken from the insert.
protocol SQLiteRecord: StoredModel, FetchableRecord, MutablePersistableRecord {}

extension SQLiteRecord {
    public init(row: GRDB.Row) throws { try self.init(row: SQLiteRow(row)) }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

extension Client: SQLiteRecord {
    public static let databaseTableName = "clients"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["login"] = login; container["login_key"] = loginKey
        container["password_hash"] = passwordHash; container["name"] = name; container["surname"] = surname
        container["street"] = street; container["house"] = house; container["city"] = city; container["lat"] = lat
        container["lon"] = lon; container["home_clinic_id"] = homeClinicId; container["preferred_language"] = preferredLanguage
        container["privacy_accepted_at"] = privacyAcceptedAt?.seconds; container["privacy_version"] = privacyVersion
        container["created_at"] = createdAt.seconds
    }
}

extension Clinic: SQLiteRecord {
    public static let databaseTableName = "clinics"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["external_id"] = externalId; container["name"] = name; container["address"] = address
        container["city"] = city; container["city_key"] = cityKey; container["state"] = state; container["zip"] = zip
        container["description"] = description; container["category"] = category; container["lat"] = lat; container["lon"] = lon
        container["is_pediatric"] = isPediatric; container["is_hospital"] = isHospital; container["time_zone"] = timeZone
        container["phone"] = phone; container["website"] = website
    }
}

extension Department: SQLiteRecord {
    public static let databaseTableName = "departments"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["clinic_id"] = clinicId; container["specialization"] = specialization
        container["is_demo"] = isDemo
    }
}

extension Doctor: SQLiteRecord {
    public static let databaseTableName = "doctors"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["department_id"] = departmentId; container["name"] = name; container["is_demo"] = isDemo
    }
}

extension WorkingHours: SQLiteRecord {
    public static let databaseTableName = "working_hours"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["weekday"] = weekday
        container["start_minute"] = startMinute; container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}

extension Appointment: SQLiteRecord {
    public static let databaseTableName = "appointments"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["client_id"] = clientId; container["clinic_id"] = clinicId
        container["department_id"] = departmentId; container["doctor_id"] = doctorId; container["doctor_name"] = doctorName
        container["starts_at"] = startsAt.seconds; container["ends_at"] = endsAt.seconds; container["status"] = status.rawValue
        container["notes"] = notes; container["created_at"] = createdAt.seconds; container["updated_at"] = updatedAt.seconds
        // Only with a visit type: the column is migration 12's.
        if let visitTypeId { container["visit_type_id"] = visitTypeId }
    }
}

extension AppointmentEvent: SQLiteRecord {
    public static let databaseTableName = "appointment_events"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["appointment_id"] = appointmentId; container["event"] = event; container["actor"] = actor
        container["at"] = at.seconds; container["starts_at"] = startsAt?.seconds; container["doctor_id"] = doctorId
        container["reason"] = reason
        // Only with a staff account: the column is migration 11's.
        if let staffId { container["staff_id"] = staffId }
    }
}

extension WorkingException: SQLiteRecord {
    public static let databaseTableName = "working_exceptions"

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id; container["doctor_id"] = doctorId; container["day"] = day; container["start_minute"] = startMinute
        container["end_minute"] = endMinute; container["slot_minutes"] = slotMinutes
    }
}
