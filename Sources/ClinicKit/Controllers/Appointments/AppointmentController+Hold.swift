import Foundation

// Holds (FHIR's Appointment/$hold, IHE ITI-116): a patient keeps a free slot for a few minutes
// (`booking.hold_seconds`, 300 unless set) while finishing a booking; nobody else can book or
// hold it meanwhile (`chooseDoctor` and `slots` count a live hold as taken), and it is free
// again when the hold expires, with nothing to clean up (every read compares with the clock).

extension AppointmentController {
    /// Holds the slot of `doctorId` in a department starting at `start` for the patient, under
    /// the booking's own rules (hours, lead time, horizon, a free slot, the patient's overlap
    /// and limit), so that booking the hold can only fail if those changed. A patient has one
    /// hold at a time: holding another slot releases the earlier hold (a failed hold keeps it).
    /// Holding the same time again keeps the first hold's expiry, and other patients may hold
    /// at most `booking.holds_per_doctor_day` of the doctor's times of that day (issue 42: free
    /// accounts held a whole day, renewing their holds, so it never came free).
    public func holdSlot(clientId: Int64, departmentId: Int64, doctorId: Int64, at start: Date,
                         visitTypeId: Int64? = nil) throws -> SlotHold {
        let now = self.now()
        return try changes.count("hold") { try database.writing { tx in
            // The patient's holds (one may be of this very time) and every expired one are
            // released first: a patient has one hold, and their own does not stand in the way
            // of the new one.
            let gathered = try tx.holdFacts(Self.factsRequest(clientId: clientId, departmentId: departmentId, visitTypeId: visitTypeId,
                                                              onlyDoctorId: doctorId, at: .instant(start), exceptAppointment: nil,
                                                              exceptHold: nil, now: now))
            return try tx.insertSlotHold(try BookingRules.hold(gathered, clientId: clientId, departmentId: departmentId,
                                                               doctorId: doctorId, start: start, visitTypeId: visitTypeId, now: now))
        } }
    }

    /// The patient's own hold, live or expired (another patient's is `not_found`, as one that
    /// does not exist).
    public func slotHold(_ id: Int64, clientId: Int64) throws -> SlotHold {
        try database.reading { tx in try owned(hold: id, tx, clientId) }
    }

    /// Lets a held slot go before its time (the patient's own hold).
    public func releaseHold(_ id: Int64, clientId: Int64) throws {
        try database.writing { tx in
            _ = try owned(hold: id, tx, clientId)
            try tx.deleteSlotHold(id: id)
        }
    }

    /// Books the patient's hold: its department, doctor, start and visit type, with every rule
    /// of a booking checked again, in one transaction that ends the hold. An expired hold still
    /// books while nobody else took the slot.
    public func bookHold(_ id: Int64, clientId: Int64, notes: String = "") throws -> Appointment {
        let notes = try Self.checkedNotes(notes)
        let now = self.now()
        return try changes.count("book") { try database.writing { tx in
            let hold = try owned(hold: id, tx, clientId)
            let booked = try book(tx, clientId: clientId, departmentId: hold.departmentId, at: .instant(hold.startsAt),
                                  doctorId: hold.doctorId, notes: notes, staffId: nil, visitTypeId: hold.visitTypeId, now: now,
                                  hold: id)
            try tx.deleteSlotHold(id: id)
            return booked
        } }
    }

    func owned(hold id: Int64, _ tx: any StoreReading, _ clientId: Int64) throws -> SlotHold {
        guard let hold = try tx.slotHold(id: id), hold.clientId == clientId else {
            throw ClinicError(.notFound, .holdNotFound, String(id))
        }
        return hold
    }
}
