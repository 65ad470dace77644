import ClinicKit
import Foundation

// The session's screens after log-in: clinics, booking, appointments, profile.
extension Session {
    var clientId: Int64 { client?.id ?? 0 }

    // MARK: Clinics

    /// The five nearest clinics to a point the patient chooses; one of them in detail.
    func nearestClinics() throws {
        guard let point = askOrigin() else { return }
        let nearby = try awaited { [system] in try await system.clinics.nearest(to: point, NearestQuery(limit: 5)) }
        guard !nearby.isEmpty else { prompt.problem(text(.nearestNone)); return }
        prompt.heading(text(.nearestTitle))
        prompt.say(numberedClinicTable(nearby, context))
        prompt.say(text(.detailsHint))
        guard let index = prompt.pick(nearby.count, default: nil) else { return }
        try showClinic(nearby[index].clinic)
    }

    /// My address (the default), an address, or coordinates; nil to go back.
    func askOrigin() -> Coordinate? {
        let mine = client?.coordinate
        var items = [text(.originAddress), text(.originCoordinates)]
        if mine != nil { items.insert(text(.originMine, client?.city ?? ""), at: 0) }
        guard let choice = prompt.choose(text(.originTitle), items) else { return nil }
        if let mine, choice == 0 { return mine }
        if items[choice] == text(.originAddress) {
            while true {
                guard let address = prompt.line(text(.labelAddress), history: .place) else { return nil }
                do {
                    let result = try awaited { [system] in try await system.geocoding.geocode(address) }
                    prompt.keep(address, as: .place)
                    prompt.say(prompt.style.dim(result.isAmbiguous ? context.ambiguityText(result)
                                                : text(.foundPlace, result.placeName ?? result.query)))
                    return result.coordinate
                } catch let error as ClinicError {
                    prompt.problem(error.message(in: language))
                } catch {
                    prompt.problem(text(.internalError, String(describing: error)))
                }
            }
        }
        while true {
            guard let answer = prompt.line(text(.labelCoordinates), history: .place) else { return nil }
            do {
                let point = try CoordinateParser.parse(answer)
                prompt.keep(answer, as: .place)
                return point
            } catch let error as ClinicError {
                prompt.problem(error.message(in: language))
            } catch {
                prompt.problem(text(.internalError, String(describing: error)))
            }
        }
    }

    /// The home clinic (the default), one of the clinics nearest to the patient, or a clinic
    /// by its id; nil to go back.
    func pickClinic() throws -> Clinic? {
        let home = try client?.homeClinicId.map(clinic(id:))
        var items = [text(.clinicNearMe), text(.clinicById)]
        if let home { items.insert(text(.clinicHome, home.name), at: 0) }
        guard let choice = prompt.choose(text(.whichClinic), items) else { return nil }
        if let home, choice == 0 { return home }
        if items[choice] == text(.clinicNearMe) {
            guard let point = client?.coordinate ?? askOrigin() else { return nil }
            let nearby = try awaited { [system] in try await system.clinics.nearest(to: point, NearestQuery(limit: 5)) }
            guard !nearby.isEmpty else { prompt.problem(text(.nearestNone)); return nil }
            prompt.heading(text(.nearestTitle))
            prompt.say(numberedClinicTable(nearby, context))
            guard let index = prompt.pick(nearby.count, default: 0) else { return nil }
            return nearby[index].clinic
        }
        while true {
            guard let answer = prompt.line(text(.labelClinicId), history: .clinic) else { return nil }
            guard let id = Int64(answer), id > 0 else { prompt.problem(text(.invalidId, answer)); continue }
            do {
                let clinic = try clinic(id: id)
                prompt.keep(answer, as: .clinic)
                return clinic
            } catch let error as ClinicError {
                prompt.problem(error.message(in: language))
            }
        }
    }

    /// A clinic by its id (`not_found` for none).
    func clinic(id: Int64) throws -> Clinic {
        try awaited { [system] in try await system.clinics.clinicWithDepartments(id).clinic }
    }

    /// A clinic's departments.
    func departments(of clinic: Clinic) throws -> [Department] {
        try awaited { [system] in try await system.clinics.clinicWithDepartments(clinic.id ?? 0).departments }
    }

    /// A department's active doctors.
    func doctors(of departmentId: Int64) throws -> [Doctor] {
        try awaited { [system] in try await system.departments.doctorsWithHours(departmentId: departmentId).map(\.doctor) }
    }

    /// A clinic's address, contacts, local time, distance and departments with their doctors;
    /// then booking there, if the patient wants.
    func showClinic(_ clinic: Clinic) throws {
        prompt.heading(clinic.name)
        prompt.say([clinic.address, clinic.city, clinic.state, clinic.zip].filter { !$0.isEmpty }.joined(separator: ", "))
        if !clinic.phone.isEmpty { prompt.say(text(.clinicPhone, clinic.phone)) }
        if !clinic.website.isEmpty { prompt.say(clinic.website) }
        let now = Date()
        prompt.say(text(.clinicLocalTime, DateText.time(now, timeZone: clinic.zone, language: language),
                        clinic.timeZone + " " + DateText.zoneName(now, timeZone: clinic.zone, language: language)))
        if let home = client?.coordinate, let there = clinic.coordinate {
            prompt.say(text(.clinicDistance, DistanceText.text(Geodesy.distance(home, there), language)))
        }
        let listed = try awaited { [system] in try await system.clinicWithDepartments(clinic.id ?? 0).departments }
        let departments = listed.map(\.department), doctors = listed.map(\.doctors)
        prompt.say()
        guard !departments.isEmpty else { prompt.say(text(.noDepartments)); return }
        prompt.say(Output.table([text(.headerDepartment), text(.headerDoctors)], zip(departments, doctors).map { department, doctors in
            [Specialization.displayName(department.specialization, language), doctors.map(\.name).joined(separator: ", ")]
        }))
        if departments.contains(where: \.isDemo) { prompt.say(prompt.style.dim(text(.demoNote))) }
        if prompt.confirm(text(.askBookHere), default: false) { try book(in: clinic) }
    }

    // MARK: Booking

    /// Department → visit type (where the department has some) → day → free slot → confirm.
    func book(in clinic: Clinic) throws {
        let departments = try departments(of: clinic)
        guard !departments.isEmpty else { prompt.problem(text(.noDepartments)); return }
        guard let index = prompt.choose(text(.chooseDepartment, clinic.name),
                                        departments.map { Specialization.displayName($0.specialization, language) })
        else { return }
        let department = departments[index]
        var visit: VisitType?
        let types = try awaited { [system] in try await system.departments.visitTypes(departmentId: department.id ?? 0) }
        if !types.isEmpty {
            guard let choice = prompt.choose(text(.chooseVisitType), types.map {
                text(.visitTypeChoice, $0.name(language), String($0.durationMinutes))
            }) else { return }
            visit = types[choice]
        }
        // Any doctor, or one of the department's by name (as the web's booking offers).
        var doctor: Int64?
        let doctors = try doctors(of: department.id ?? 0)
        if doctors.count > 1 {
            guard let choice = prompt.choose(text(.chooseDoctor), [text(.anyDoctor)] + doctors.map(\.name)) else { return }
            doctor = choice == 0 ? nil : doctors[choice - 1].id
        }
        guard let slot = try pickSlot(department: department.id ?? 0, clinic: clinic, doctor: doctor, visitTypeId: visit?.id) else { return }
        try confirmBooking(clinic: clinic, department: department, slot: slot, visitTypeId: visit?.id)
    }

    /// The earliest free slot for a specialization in the clinics nearest to the patient.
    func findSlot() throws {
        let all = Specialization.all
        guard let index = prompt.choose(text(.chooseSpecialization), all.map { Specialization.displayName($0.key, language) })
        else { return }
        guard let point = client?.coordinate ?? askOrigin() else { return }
        prompt.say(prompt.style.dim(text(.searching)))
        let found = try awaited { [system] in
            try await system.appointments.findFreeSlots(specialization: all[index].key, near: point, before: nil, limit: 5,
                                                        pediatricOnly: false, clinics: system.clinics)
        }
        guard !found.isEmpty else {
            prompt.problem(text(.findNoneSession, Specialization.displayName(all[index].key, language)))
            return
        }
        prompt.heading(text(.foundSlotsTitle, Specialization.displayName(all[index].key, language)))
        prompt.say(Output.table(
            ["#", text(.headerClinic), text(.headerDistance), text(.headerStart), text(.headerDoctor)],
            found.enumerated().map { number, item in
                [String(number + 1), item.clinic.clinic.name, DistanceText.text(item.clinic.distance, language),
                 localTime(item.slot.start, item.clinic.clinic, context), item.slot.doctorName]
            }, flexible: [1, 4]))
        guard let choice = prompt.pick(found.count, default: 0) else { return }
        let item = found[choice]
        let department = try awaited { [system] in try await system.departmentWithClinic(item.departmentId).department }
        try confirmBooking(clinic: item.clinic.clinic, department: department, slot: item.slot)
    }

    /// A free slot of a department (or of one doctor) in the next 14 days: first the day, then
    /// the time. Times are the clinic's, with its zone named when it differs from the user's.
    func pickSlot(department: Int64, clinic: Clinic, doctor: Int64?, visitTypeId: Int64? = nil) throws -> Slot? {
        let free = try awaited { [system] in
            try await system.appointments.slotsAwaited(departmentId: department, doctorId: doctor, days: 14, visitTypeId: visitTypeId).slots
        }.filter(\.isAvailable)
        guard !free.isEmpty else { prompt.problem(text(.noFreeSlots)); return nil }
        var days: [(title: String, slots: [Slot])] = []
        for slot in free {
            let title = DateText.day(slot.start, timeZone: clinic.zone, language: language)
            if days.last?.title == title { days[days.count - 1].slots.append(slot) } else { days.append((title, [slot])) }
        }
        var heading = text(.chooseDay)
        if clockDiffers(clinic, at: free[0].start) {
            heading += " " + text(.clinicZoneNote, clinic.timeZone + " " + DateText.zoneName(free[0].start, timeZone: clinic.zone,
                                                                                              language: language))
        }
        guard let day = prompt.choose(heading, days.map { $0.title + " — " + Noun.freeSlot.count($0.slots.count, language) })
        else { return nil }
        let slots = days[day].slots
        // Times right-aligned ("9:40 AM" under "10:00 AM"), so that the doctors' names line up.
        let starts = slots.map { DateText.time($0.start, timeZone: clinic.zone, language: language) }
        let ends = slots.map { DateText.time($0.end, timeZone: clinic.zone, language: language) }
        func padded(_ text: String, _ all: [String]) -> String {
            String(repeating: " ", count: (all.map(Output.displayWidth).max() ?? 0) - Output.displayWidth(text)) + text
        }
        guard let index = prompt.choose(text(.chooseTime, days[day].title), slots.indices.map {
            padded(starts[$0], starts) + "–" + padded(ends[$0], ends) + "  " + slots[$0].doctorName
        }) else { return nil }
        return slots[index]
    }

    func confirmBooking(clinic: Clinic, department: Department, slot: Slot, visitTypeId: Int64? = nil) throws {
        let when = localTime(slot.start, clinic, context)
        let question = text(.askBook, Specialization.displayName(department.specialization, language), clinic.name, when,
                            slot.doctorName)
        // The reason for the visit, as on the web (kept sealed; the clinic's staff read it).
        guard let reason = prompt.optionalLine(text(.labelReason)) else { prompt.say(text(.notBooked)); return }
        guard prompt.confirm(question, default: true) else { prompt.say(text(.notBooked)); return }
        let appointment = try awaited { [system, clientId] in
            try await system.appointments.book(clientId: clientId, departmentId: department.id ?? 0, at: .instant(slot.start),
                                               doctorId: slot.doctorId, notes: reason, visitTypeId: visitTypeId)
        }
        prompt.success(text(.booked, String(appointment.id ?? 0), localTime(appointment.startsAt, clinic, context), clinic.name,
                            appointment.doctorName))
    }

    // MARK: Appointments

    /// Upcoming, then past and cancelled, numbered in one run: a number opens that visit (its
    /// details and history), with rescheduling and cancelling where they fit.
    func myAppointments() throws {
        while true {
            let all = try awaited { [system, clientId] in try await system.appointments(ofPatient: clientId, scope: .all) }
            let now = Date()
            // Soonest first; everything that is not upcoming is past or cancelled.
            let upcoming = all.filter { AppointmentScope.upcoming.contains($0.appointment, now: now) }
            let closed = all.filter { !AppointmentScope.upcoming.contains($0.appointment, now: now) }
            var numbered: [AppointmentAtClinic] = []
            for (title, list) in [(text(.upcomingTitle), upcoming), (text(.pastTitle), closed)] {
                prompt.heading(title + " · " + Noun.appointment.count(list.count, language))
                guard !list.isEmpty else { continue }
                // One numbering across both tables.
                let table = appointmentTable(list, context, numbered: true).split(separator: "\n", omittingEmptySubsequences: false)
                let offset = numbered.count
                prompt.say(table.enumerated().map { index, line in
                    guard index >= 2, offset > 0 else { return String(line) }
                    return Self.renumbered(String(line), by: offset)
                }.joined(separator: "\n"))
                numbered += list
            }
            guard !numbered.isEmpty else { return }
            prompt.say(prompt.style.dim(text(.openVisitHint)))
            guard let index = prompt.pick(numbered.count, default: nil) else { return }
            try openVisit(numbered[index])
        }
    }

    /// A table line's first column, the choice number, moved on by `offset` (the second table
    /// goes on from the first's last number), keeping the line's width.
    static func renumbered(_ line: String, by offset: Int) -> String {
        let digits = line.prefix { $0 == " " || $0.isNumber }
        guard let number = Int(digits.trimmingCharacters(in: .whitespaces)) else { return line }
        let text = String(number + offset)
        let width = digits.count
        return (text + String(repeating: " ", count: max(1, width - text.count))) + line.dropFirst(width)
    }

    /// One visit: when and where, the doctor, status, the reason and its history; then what
    /// can be done with it.
    func openVisit(_ item: AppointmentAtClinic) throws {
        let (appointment, history) = try awaited { [system, clientId] in
            try await system.appointments.appointmentWithHistory(item.appointment.id ?? 0, clientId: clientId)
        }
        prompt.heading(Specialization.displayName(item.department.specialization, language) + " — " + item.clinic.name)
        prompt.say(item.clinic.address + ", " + item.clinic.city + ", " + item.clinic.state + " " + item.clinic.zip)
        prompt.say(appointmentText(appointment, history, item.clinic, context))
        guard appointment.status.isPatientChangeable, appointment.startsAt > Date() else { return }
        guard let action = prompt.choose(text(.visitActions), [text(.actionReschedule), text(.actionCancel)], default: nil) else { return }
        if action == 0 { try reschedule(item) } else { try cancel(item) }
    }
    /// The inbox, newest first with unread ones marked; a message chosen is shown and marked read.
    func messages() throws {
        while true {
            let list = try awaited { [system, clientId] in try await system.clients.messages(clientId: clientId) }
            guard !list.isEmpty else { prompt.say(text(.messagesNone)); return }
            let items = list.map { message in
                (message.readAt == nil ? "* " : "  ") + DateText.dateTime(message.createdAt, timeZone: .current, language: language)
                    + "  " + message.subject
            }
            guard let index = prompt.choose(text(.menuMessages), items, default: nil) else { return }
            let message = try awaited { [system, clientId] in try await system.clients.markRead(clientId: clientId, messageId: list[index].id) }
            prompt.heading(message.subject)
            prompt.say(message.body)
        }
    }

    /// One of the patient's upcoming appointments; nil to go back (Enter too: nothing is
    /// chosen by default before a change).
    func chooseUpcoming(_ title: TerminalKey) throws -> AppointmentAtClinic? {
        let upcoming = try awaited { [system, clientId] in try await system.appointments(ofPatient: clientId, scope: .upcoming) }
        guard !upcoming.isEmpty else { prompt.say(text(.noAppointments)); return nil }
        prompt.heading(text(title))
        prompt.say(appointmentTable(upcoming, context, numbered: true))
        guard let index = prompt.pick(upcoming.count, default: nil) else { return nil }
        return upcoming[index]
    }

    func reschedule() throws {
        guard let chosen = try chooseUpcoming(.rescheduleTitle) else { return }
        try reschedule(chosen)
    }

    func reschedule(_ chosen: AppointmentAtClinic) throws {
        let appointment = chosen.appointment, clinic = chosen.clinic
        guard let slot = try pickSlot(department: appointment.departmentId, clinic: clinic, doctor: appointment.doctorId) else {
            return
        }
        let question = text(.askReschedule, localTime(appointment.startsAt, clinic, context), localTime(slot.start, clinic, context))
        guard prompt.confirm(question, default: true) else { prompt.say(text(.notChanged)); return }
        let moved = try awaited { [system, clientId] in
            try await system.appointments.reschedule(appointment.id ?? 0, clientId: clientId, to: .instant(slot.start))
        }
        prompt.success(text(.rescheduled, String(moved.id ?? 0), localTime(moved.startsAt, clinic, context), moved.doctorName))
    }

    func cancel() throws {
        guard let chosen = try chooseUpcoming(.cancelTitle) else { return }
        try cancel(chosen)
    }

    func cancel(_ chosen: AppointmentAtClinic) throws {
        let appointment = chosen.appointment, clinic = chosen.clinic
        guard prompt.confirm(text(.askCancel, localTime(appointment.startsAt, clinic, context), clinic.name), default: false) else {
            prompt.say(text(.notChanged))
            return
        }
        let cancelled = try awaited { [system, clientId] in try await system.appointments.cancel(appointment.id ?? 0, clientId: clientId) }
        prompt.success(text(.cancelled, String(cancelled.id ?? 0)))
    }

    // MARK: Profile

    func profile() throws {
        while let current = client {
            let home = try current.homeClinicId.map(clinic(id:))
            prompt.heading(text(.profileTitle))
            prompt.say(Output.table([text(.headerField), text(.headerValue)], [
                [text(.labelLogin), current.login],
                [text(.labelName), current.name], [text(.labelSurname), current.surname],
                [text(.labelStreet), current.street], [text(.labelHouse), current.house], [text(.labelCity), current.city],
                [text(.labelHomeClinic), home?.name ?? "—"], [text(.labelLanguage), current.language == .ru ? "Русский" : "English"],
            ]))
            let fields: [RegistrationField] = [.name, .surname, .street, .house, .city]
            let items = fields.map { text(.editField, label($0)) }
                + [text(.editHomeClinic), text(.menuLanguage), text(.menuPassword), text(.menuDeleteAccount)]
            guard let choice = prompt.choose(text(.profileWhat), items, default: nil) else { return }
            if choice < fields.count {
                try edit(fields[choice], of: current)
            } else if choice == fields.count {
                if let clinic = try pickClinic() { try save(ProfileChanges(clinicId: clinic.id)) }
            } else if choice == fields.count + 1 {
                let other: Language = language == .en ? .ru : .en
                client = try awaited { [system, clientId] in
                    try await system.clients.updateProfile(clientId: clientId, ProfileChanges(language: other))
                }
                use(other)
                prompt.success(text(.profileSaved))
            } else if choice == fields.count + 2 {
                try changePassword()
            } else {
                try deleteAccount()
            }
        }
    }

    func edit(_ field: RegistrationField, of current: Client) throws {
        let values: [RegistrationField: String] = [.name: current.name, .surname: current.surname, .street: current.street,
                                                    .house: current.house, .city: current.city]
        while true {
            guard let value = prompt.line(label(field), default: values[field]) else { return }
            var changes = ProfileChanges()
            switch field {
            case .name: changes.name = value
            case .surname: changes.surname = value
            case .street: changes.street = value
            case .house: changes.house = value
            case .city:
                // A city several places share is asked about, as at registration.
                if let found = try? awaited({ [system] in try await system.geocoding.resolve(value) }), found.isAmbiguous {
                    guard let typed = whichPlace(value, found) else { return }
                    changes.city = typed
                } else {
                    changes.city = value
                }
            case .login: return
            }
            do {
                try save(changes)
                return
            } catch let error as ClinicError where error.code == .invalidInput {
                prompt.problem(error.message(in: language))
            }
        }
    }

    func save(_ changes: ProfileChanges) throws {
        client = try awaited { [system, clientId] in try await system.clients.updateProfile(clientId: clientId, changes) }
        prompt.success(text(.profileSaved))
    }

    func changePassword() throws {
        guard let old = prompt.secret(text(.labelOldPassword)) else { return }
        prompt.say(prompt.style.dim(Validator.passwordRules(language)))
        guard let new = prompt.secret(text(.labelPassword)), let again = prompt.secret(text(.labelPasswordAgain)) else { return }
        guard new == again else { prompt.problem(text(.passwordsDiffer)); return }
        try awaited { [system, clientId, token] in
            try await system.clients.changePassword(clientId: clientId, old: old, new: new, keeping: token, passwords: InlinePasswordRunner())
        }
        prompt.success(text(.passwordChanged))
    }

    func deleteAccount() throws {
        prompt.say(text(.deleteWarning))
        guard let password = prompt.secret(text(.labelPassword)),
              prompt.confirm(text(.askDelete, client?.login ?? ""), default: false) else {
            prompt.say(text(.notChanged))
            return
        }
        let login = client?.login ?? ""
        try awaited { [system, clientId] in
            try await system.clients.deleteAccount(clientId: clientId, password: password, passwords: InlinePasswordRunner())
        }
        context.sessionFile.delete()
        client = nil
        token = nil
        // What this account typed goes with it.
        prompt.editor?.forget(login)
        prompt.success(text(.accountDeleted, login))
    }
}
