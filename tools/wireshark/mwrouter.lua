-- mwrouter.lua: a Wireshark/tshark dissector for MessageWay packets as
-- mwrouter carries them (docs/encapsulation.md): Ethernet II with EtherType
-- 0x88B5, UDP port 34997, and bare packets in captures of LINKTYPE_USER0
-- (147).
--
-- It decodes the leading L2RHs (mwrouter's router hops), the EEP header,
-- the data block and its padding, the trailer (EI), the RRP and ERR
-- messages with all their records, and management datagrams (PT 0x0006:
-- the MAD header, the directed route, and the NodeDescription, NodeInfo and
-- PortInfo attributes). The layouts are those of rrp/src/wire and
-- mgmt/src/wire; the values agree with `mwdump --json`
-- (tools/mwdump/tests/wireshark.rs checks them field by field).
--
-- Use: tshark -X lua_script:tools/wireshark/mwrouter.lua -r capture.pcap
-- or copy it to ~/.local/lib/wireshark/plugins/ (tools/wireshark/README.md).
--
-- Malformed input never raises a Lua error: each fault becomes an expert
-- info (mw.malformed, group "Malformed") and dissection stops there.

-- Loaded twice (the Debian package's copy in Wireshark's global plugin
-- folder, then this file again with -X lua_script:), the second load stops
-- here: a protocol registers once, and the first copy dissects.
local registered, mw = pcall(Proto, "mw", "MessageWay")
if not registered then
  return
end

local HEADER_LEN = 16
local TRAILER_LEN = 8
local MAX_L2RH_CONTENT = 63
local MAX_NATIVE_LEN = 18
local MAD_LEN = 256

-- Value names -------------------------------------------------------------

local RRP_DESC = {
  [1] = "please give me L2-routes to node",
  [2] = "here are L2-routes to node",
  [3] = "redirect to node via a neighbour HR",
  [4] = "please tell me about node (address | name | capabilities)",
  [5] = "info about node (address, name, capabilities)",
  [6] = "which HR should I use for node",
  [7] = "who/what are you?",
  [8] = "please give me your RTs",
  [9] = "here is an RT",
}
local ERR_NAMES = { [1] = "UNK", [2] = "HRDOWN", [3] = "LINKDOWN", [4] = "GENERAL" }
local ERR_DESC = {
  [1] = "destination unknown",
  [2] = "HR down",
  [3] = "link down",
  [4] = "general error: the enclosed packet could not be handled",
}
local CAP_NAMES = {
  [1] = "gp-computing", [2] = "router", [3] = "messageway-server",
  [4] = "multicast-server", [5] = "nfs", [6] = "paging-server",
  [7] = "float-dsp", [8] = "fixed-dsp", [9] = "printer",
}
local PT_VALS = {
  [1] = "ERR", [2] = "RRP", [3] = "Embedded MessageWay packet",
  [4] = "Memory read", [5] = "Memory write", [6] = "Management",
}
local MAD_CLASSES = {
  [0x01] = "Subn", [0x81] = "SubnDR", [0x03] = "SubnAdm", [0x04] = "Perf",
  [0x30] = "VendorTrace",
}
local MAD_METHODS = {
  [0x01] = "Get", [0x02] = "Set", [0x03] = "Send", [0x05] = "Trap",
  [0x06] = "Report", [0x07] = "TrapRepress", [0x15] = "Delete",
  [0x81] = "GetResp", [0x86] = "ReportResp", [0x95] = "DeleteResp",
}

local function addr_class(a)
  if a == 0 then return "illegal"
  elseif a < 0x40 then return "l2rh-marker"
  elseif a <= 0x7FFF then return "node"
  elseif a <= 0xFFFD then return "logical"
  elseif a == 0xFFFE then return "hey-you"
  else return "broadcast" end
end

local function pt_class(pt)
  if pt == 1 then return "ERR"
  elseif pt == 2 then return "RRP"
  elseif pt == 3 then return "EMBEDDED"
  elseif pt == 4 then return "MEMORY-READ"
  elseif pt == 5 then return "MEMORY-WRITE"
  elseif pt == 6 then return "MANAGEMENT"
  elseif pt >= 0x0100 and pt <= 0x05FF then return "USER"
  elseif pt >= 0x0600 then return "ETHERTYPE"
  else return "RESERVED" end
end

local function type_name(pt, te)
  if pt == 2 and te >= 1 and te <= 9 then return "RRP#" .. te end
  if pt == 1 then return ERR_NAMES[te] end
  return nil
end

local function kind_of(pt, te)
  local n = type_name(pt, te)
  if pt == 2 and n then return n end
  if pt == 1 and n then return "ERR " .. n end
  return pt_class(pt)
end

-- mgmt::wire::Status::describe
local function status_text(s)
  local parts = {}
  local low = s % 256
  if bit.band(low, 0x01) ~= 0 then parts[#parts + 1] = "busy" end
  if bit.band(low, 0x02) ~= 0 then parts[#parts + 1] = "redirect" end
  local code = bit.band(bit.rshift(low, 2), 7)
  if code == 1 then parts[#parts + 1] = "bad version"
  elseif code == 2 then parts[#parts + 1] = "method not supported"
  elseif code == 3 then parts[#parts + 1] = "method/attribute not supported"
  elseif code == 7 then parts[#parts + 1] = "invalid value"
  elseif code ~= 0 then parts[#parts + 1] = "reserved code " .. code end
  if bit.band(low, 0xE0) ~= 0 then
    parts[#parts + 1] = string.format("reserved bits 0x%02x", bit.band(low, 0xE0))
  end
  local hi = s - low
  if hi == 0x0100 then parts[#parts + 1] = "SubnAdm: no resources"
  elseif hi == 0x0200 then parts[#parts + 1] = "SubnAdm: no records"
  elseif hi == 0x1000 then parts[#parts + 1] = "SubnAdm: the member's MTU is above the group's"
  elseif hi == 0x1100 then
    parts[#parts + 1] = "SubnAdm: a router on the member's SAN cannot carry the group's MTU"
  elseif hi == 0x1200 then parts[#parts + 1] = "SubnAdm: the group exists elsewhere with a smaller MTU"
  elseif hi == 0x1300 then parts[#parts + 1] = "SubnAdm: the group exists"
  elseif hi ~= 0 then parts[#parts + 1] = string.format("class-specific 0x%04x", hi) end
  if #parts == 0 then return "ok" end
  return table.concat(parts, ", ")
end

-- mgmt::attr::name
local function attribute_name(class, id)
  if id == 0x0001 then return "ClassPortInfo" end
  if class == 0x03 then
    return ({ [0x0011] = "NodeRecord", [0x0035] = "PathRecord",
              [0x0038] = "McMemberRecord", [0xFF20] = "McGroupRecord" })[id]
  end
  if class == 0x30 then return id == 0x0010 and "SourceRoute" or nil end
  if class == 0x04 then
    return ({ [0x0012] = "PortCounters", [0x001D] = "PortCountersExtended" })[id]
  end
  if class ~= 0x01 and class ~= 0x81 then return nil end
  return ({ [0x0002] = "Notice", [0x0010] = "NodeDescription", [0x0011] = "NodeInfo",
            [0x0015] = "PortInfo", [0x0016] = "PartitionTable", [0x0020] = "SMInfo",
            [0xFF10] = "RouteEntry",
            [0xFF11] = "FibBlock", [0xFF12] = "LrtBlock", [0xFF13] = "Neighbour" })[id]
end

-- Fields --------------------------------------------------------------------

local F = {}
local function field(key, pf) F[key] = pf; return pf end

-- The packet as a whole.
field("kind", ProtoField.string("mw.kind", "Kind"))
field("packet_len", ProtoField.uint32("mw.packet_len", "Packet length", base.DEC))
field("padding_len", ProtoField.uint32("mw.padding_len", "Bytes after the trailer", base.DEC))

-- L2RHs: leading (mw.l2rh.*), in an R5 (mw.rrp.l2rh.*), enclosed in an ERR
-- GENERAL (mw.err.l2rh.*).
local function l2rh_fields(prefix, label)
  local t = {}
  t.tree = ProtoField.none(prefix, label)
  t.len = ProtoField.uint16(prefix .. ".len", "Length (L)", base.DEC)
  t.words = ProtoField.uint8(prefix .. ".words", "Words", base.DEC)
  t.content = ProtoField.bytes(prefix .. ".content", "Content")
  t.egress = ProtoField.uint16(prefix .. ".egress", "Egress HR", base.HEX)
  t.native_len = ProtoField.uint8(prefix .. ".native_len", "Native address length", base.DEC)
  t.native = ProtoField.bytes(prefix .. ".native", "Native address")
  t.mac = ProtoField.ether(prefix .. ".mac", "Native address as MAC")
  t.udp = ProtoField.string(prefix .. ".udp", "Native address as UDP endpoint")
  t.native_only = ProtoField.bool(prefix .. ".native_only", "Native hop only")
  t.egress_only = ProtoField.bool(prefix .. ".egress_only", "Egress only")
  t.pad = ProtoField.bytes(prefix .. ".pad", "Padding")
  for k, v in pairs(t) do F[prefix .. ":" .. k] = v end
  return t
end
local L2RH = l2rh_fields("mw.l2rh", "L2-Routing Header")
local R5_L2RH = l2rh_fields("mw.rrp.l2rh", "L2RH")
local ENC_L2RH = l2rh_fields("mw.err.l2rh", "Enclosed L2RH")

-- EEP header.
field("header", ProtoField.none("mw.header", "EEP header"))
field("dst", ProtoField.uint16("mw.dst", "Destination", base.HEX))
field("dst_class", ProtoField.string("mw.dst_class", "Destination class"))
field("priority", ProtoField.uint8("mw.priority", "Priority", base.DEC))
field("version", ProtoField.uint8("mw.version", "Version", base.DEC))
field("pt", ProtoField.uint16("mw.pt", "Packet type", base.HEX, PT_VALS))
field("pt_class", ProtoField.string("mw.pt_class", "Packet class"))
field("te", ProtoField.uint16("mw.te", "Type extension", base.DEC))
field("te_name", ProtoField.string("mw.te_name", "Type extension name"))
field("e", ProtoField.uint8("mw.e", "E", base.HEX, nil, 0xF0))
field("little_endian", ProtoField.bool("mw.e.little_endian", "Little endian"))
field("swap_bits", ProtoField.uint8("mw.e.swap_bits", "Swap width (bits)", base.DEC))
field("pl", ProtoField.uint8("mw.pl", "Pad length", base.DEC, nil, 0x0F))
field("dl", ProtoField.uint24("mw.dl", "Data length (words)", base.DEC))
field("src", ProtoField.uint16("mw.src", "Source", base.HEX))
field("src_class", ProtoField.string("mw.src_class", "Source class"))
field("free", ProtoField.uint16("mw.free", "Free", base.HEX))

-- Data block and trailer.
field("data", ProtoField.bytes("mw.data", "Data"))
field("data_len", ProtoField.uint32("mw.data_len", "Data bytes", base.DEC))
field("padding", ProtoField.bytes("mw.padding", "Padding (PL)"))
field("trailer", ProtoField.none("mw.trailer", "Trailer"))
field("ei", ProtoField.uint64("mw.ei", "Error indication", base.HEX))

-- RRP/ERR messages.
field("message", ProtoField.none("mw.rrp", "Message"))
field("description", ProtoField.string("mw.rrp.description", "Description"))
field("record", ProtoField.none("mw.rrp.record", "Record"))
field("rtyp", ProtoField.uint8("mw.rrp.rtyp", "RTyp", base.DEC))
field("rtype", ProtoField.string("mw.rrp.type", "Record type"))
field("rpl", ProtoField.uint8("mw.rrp.pl", "PL", base.DEC))
field("rl", ProtoField.uint16("mw.rrp.rl", "RL (words)", base.DEC))
field("role", ProtoField.string("mw.rrp.role", "Role"))
field("node", ProtoField.uint32("mw.rrp.node", "Node entry", base.DEC))
field("rpad", ProtoField.bytes("mw.rrp.pad", "Padding"))
field("address", ProtoField.uint16("mw.rrp.address", "Address", base.HEX))
field("address_class", ProtoField.string("mw.rrp.address_class", "Address class"))
field("name", ProtoField.string("mw.rrp.name", "Name"))
field("name_bytes", ProtoField.bytes("mw.rrp.name_bytes", "Name bytes"))
field("cc", ProtoField.uint8("mw.rrp.cc", "Capability code", base.DEC))
field("cc_name", ProtoField.string("mw.rrp.cc_name", "Capability"))
field("params", ProtoField.bytes("mw.rrp.params", "Parameters"))
field("logical", ProtoField.uint16("mw.rrp.logical", "Logical address", base.HEX))
field("rcvf", ProtoField.uint16("mw.rrp.rcvf", "RCVF address", base.HEX))
field("q", ProtoField.uint16("mw.rrp.q", "Q", base.DEC))
field("mtu", ProtoField.uint24("mw.rrp.mtu", "MTU (words)", base.DEC))
field("mtu_bytes", ProtoField.uint32("mw.rrp.mtu_bytes", "MTU (bytes)", base.DEC))
field("mtu_unlimited", ProtoField.bool("mw.rrp.mtu_unlimited", "MTU unlimited"))
field("san_id", ProtoField.uint16("mw.rrp.san_id", "SAN-ID", base.HEX))
field("sn", ProtoField.uint16("mw.rrp.sn", "SN", base.DEC))
field("part_index", ProtoField.uint8("mw.rrp.part_index", "RT part", base.DEC))
field("part_count", ProtoField.uint8("mw.rrp.part_count", "RT parts", base.DEC))
field("part_valid", ProtoField.bool("mw.rrp.part_valid", "RT part marker valid"))

-- ERR GENERAL's enclosed bytes.
field("enclosed", ProtoField.bytes("mw.err.enclosed", "Enclosed bytes"))
field("enc_len", ProtoField.uint32("mw.err.enclosed_len", "Enclosed length", base.DEC))
field("enc_complete", ProtoField.bool("mw.err.enclosed_complete", "Whole packet enclosed"))
field("enc_kind", ProtoField.string("mw.err.enclosed_kind", "Enclosed kind"))
field("enc_dst", ProtoField.uint16("mw.err.enclosed.dst", "Enclosed destination", base.HEX))
field("enc_src", ProtoField.uint16("mw.err.enclosed.src", "Enclosed source", base.HEX))
field("enc_pt", ProtoField.uint16("mw.err.enclosed.pt", "Enclosed packet type", base.HEX))
field("enc_te", ProtoField.uint16("mw.err.enclosed.te", "Enclosed type extension", base.DEC))
field("enc_dl", ProtoField.uint24("mw.err.enclosed.dl", "Enclosed data length", base.DEC))
field("enc_note", ProtoField.string("mw.err.enclosed_note", "Enclosed note"))

-- Management datagrams.
field("mad", ProtoField.none("mw.mad", "Management datagram"))
field("mad_base_version", ProtoField.uint8("mw.mad.base_version", "BaseVersion", base.DEC))
field("mad_class", ProtoField.uint8("mw.mad.class", "MgmtClass", base.HEX, MAD_CLASSES))
field("mad_class_name", ProtoField.string("mw.mad.class_name", "Class name"))
field("mad_class_version", ProtoField.uint8("mw.mad.class_version", "ClassVersion", base.DEC))
field("mad_response", ProtoField.bool("mw.mad.response", "Response (R)"))
field("mad_method", ProtoField.uint8("mw.mad.method", "Method", base.HEX, MAD_METHODS))
field("mad_method_name", ProtoField.string("mw.mad.method_name", "Method name"))
field("mad_status", ProtoField.uint16("mw.mad.status", "Status", base.HEX))
field("mad_status_text", ProtoField.string("mw.mad.status_text", "Status text"))
field("mad_tid", ProtoField.uint64("mw.mad.tid", "TransactionID", base.HEX))
field("mad_attribute", ProtoField.uint16("mw.mad.attribute", "AttributeID", base.HEX))
field("mad_attribute_name", ProtoField.string("mw.mad.attribute_name", "Attribute"))
field("mad_modifier", ProtoField.uint32("mw.mad.modifier", "AttributeModifier", base.HEX))
field("mad_mkey", ProtoField.uint64("mw.mad.mkey", "M_Key", base.HEX))
field("mad_attribute_data", ProtoField.bytes("mw.mad.attribute_data", "Attribute area"))
field("dr_returning", ProtoField.bool("mw.mad.dr.returning", "Returning (D)"))
field("dr_hop_pointer", ProtoField.uint8("mw.mad.dr.hop_pointer", "HopPointer", base.DEC))
field("dr_hop_count", ProtoField.uint8("mw.mad.dr.hop_count", "HopCount", base.DEC))
local function path_fields(prefix, label)
  local t = {}
  t.tree = ProtoField.none(prefix, label)
  t.hr = ProtoField.uint16(prefix .. ".hr", "HR", base.HEX)
  t.native_len = ProtoField.uint8(prefix .. ".native_len", "Native address length", base.DEC)
  t.native = ProtoField.bytes(prefix .. ".native", "Native address")
  t.mac = ProtoField.ether(prefix .. ".mac", "Native address as MAC")
  t.udp = ProtoField.string(prefix .. ".udp", "Native address as UDP endpoint")
  for k, v in pairs(t) do F[prefix .. ":" .. k] = v end
  return t
end
local INITIAL_PATH = path_fields("mw.mad.dr.initial", "InitialPath entry")
local RETURN_PATH = path_fields("mw.mad.dr.return", "ReturnPath entry")

-- Attribute fields, named as mwdump's JSON `mad.fields` keys.
local ATTR = {}
local function attr_field(key, pf) ATTR[key] = pf; F["attr:" .. key] = pf end
attr_field("text", ProtoField.string("mw.mad.attr.text", "Text"))
attr_field("base_version", ProtoField.uint8("mw.mad.attr.base_version", "BaseVersion", base.DEC))
attr_field("class_version", ProtoField.uint8("mw.mad.attr.class_version", "ClassVersion", base.DEC))
attr_field("node_type", ProtoField.uint8("mw.mad.attr.node_type", "NodeType", base.DEC))
attr_field("num_ports", ProtoField.uint8("mw.mad.attr.num_ports", "NumPorts", base.DEC))
attr_field("system_image_identity",
  ProtoField.uint64("mw.mad.attr.system_image_identity", "SystemImageIdentity", base.HEX))
attr_field("node_identity", ProtoField.uint64("mw.mad.attr.node_identity", "NodeIdentity", base.HEX))
attr_field("port_identity", ProtoField.uint64("mw.mad.attr.port_identity", "PortIdentity", base.HEX))
attr_field("partition_cap", ProtoField.uint16("mw.mad.attr.partition_cap", "PartitionCap", base.DEC))
attr_field("implementation_level",
  ProtoField.uint16("mw.mad.attr.implementation_level", "ImplementationLevel", base.DEC))
attr_field("revision", ProtoField.uint32("mw.mad.attr.revision", "Revision", base.HEX))
attr_field("local_port_num", ProtoField.uint8("mw.mad.attr.local_port_num", "LocalPortNum", base.DEC))
attr_field("vendor_id", ProtoField.uint24("mw.mad.attr.vendor_id", "VendorID", base.HEX))
attr_field("local_port_address",
  ProtoField.uint16("mw.mad.attr.local_port_address", "LocalPortAddress", base.HEX))
attr_field("mkey", ProtoField.uint64("mw.mad.attr.mkey", "M_Key", base.HEX))
attr_field("address", ProtoField.uint16("mw.mad.attr.address", "Address", base.HEX))
attr_field("san_id", ProtoField.uint16("mw.mad.attr.san_id", "SAN-ID", base.HEX))
attr_field("manager_address",
  ProtoField.uint16("mw.mad.attr.manager_address", "ManagerAddress", base.HEX))
attr_field("mkey_lease_period",
  ProtoField.uint16("mw.mad.attr.mkey_lease_period", "M_KeyLeasePeriod (s)", base.DEC))
attr_field("mtu", ProtoField.uint32("mw.mad.attr.mtu", "MTU (bytes)", base.DEC))
attr_field("cost", ProtoField.uint16("mw.mad.attr.cost", "Cost", base.DEC))
attr_field("port_state", ProtoField.uint8("mw.mad.attr.port_state", "PortState", base.DEC,
  { [1] = "down", [4] = "active" }))
attr_field("mkey_protect_bits",
  ProtoField.uint8("mw.mad.attr.mkey_protect_bits", "M_KeyProtectBits", base.DEC, nil, 0x03))
attr_field("link_kind", ProtoField.uint8("mw.mad.attr.link_kind", "LinkKind", base.DEC,
  { [0] = "memory", [1] = "UDP", [2] = "Ethernet" }))
attr_field("mkey_violations",
  ProtoField.uint16("mw.mad.attr.mkey_violations", "M_KeyViolations", base.DEC))
attr_field("lrt_entries", ProtoField.uint16("mw.mad.attr.lrt_entries", "LRT entries", base.DEC))
attr_field("buddies", ProtoField.uint16("mw.mad.attr.buddies", "Buddies", base.DEC))
attr_field("native_len", ProtoField.uint8("mw.mad.attr.native_len", "Native address length", base.DEC))
attr_field("native_hex", ProtoField.bytes("mw.mad.attr.native_hex", "Native address"))
attr_field("native_mac", ProtoField.ether("mw.mad.attr.native_mac", "Native address as MAC"))
attr_field("native_udp", ProtoField.string("mw.mad.attr.native_udp", "Native address as UDP endpoint"))

local all_fields = {}
for _, pf in pairs(F) do all_fields[#all_fields + 1] = pf end
mw.fields = all_fields

local ef_malformed = ProtoExpert.new("mw.malformed", "Malformed MessageWay packet",
  expert.group.MALFORMED, expert.severity.ERROR)
local ef_bug = ProtoExpert.new("mw.dissector_bug", "Internal error of the MessageWay dissector",
  expert.group.MALFORMED, expert.severity.ERROR)
local ef_note = ProtoExpert.new("mw.note", "MessageWay note",
  expert.group.COMMENTS_GROUP, expert.severity.NOTE)
mw.experts = { ef_malformed, ef_bug, ef_note }

-- Helpers --------------------------------------------------------------------

-- A fault found while dissecting: reported once, as an expert info on
-- `item` (or the protocol item), and the packet's summary says so.
local Malformed = {}
Malformed.__index = Malformed
local function fail(field_name, msg)
  error(setmetatable({ field = field_name, msg = msg }, Malformed), 0)
end

local function hexstr(tvb, off, len)
  if len <= 0 then return "" end
  return tostring(tvb:bytes(off, len)):lower()
end

local function ipv4_text(tvb, off)
  return string.format("%d.%d.%d.%d", tvb(off, 1):uint(), tvb(off + 1, 1):uint(),
    tvb(off + 2, 1):uint(), tvb(off + 3, 1):uint())
end

-- RFC 5952 text, as Rust's Ipv6Addr prints it (IPv4-mapped as ::ffff:a.b.c.d).
local function ipv6_text(tvb, off)
  local g = {}
  for i = 0, 7 do g[i + 1] = tvb(off + 2 * i, 2):uint() end
  if g[1] == 0 and g[2] == 0 and g[3] == 0 and g[4] == 0 and g[5] == 0 and g[6] == 0xFFFF then
    return "::ffff:" .. ipv4_text(tvb, off + 12)
  end
  local best_start, best_len, cur_start, cur_len = 0, 0, 0, 0
  for i = 1, 8 do
    if g[i] == 0 then
      if cur_len == 0 then cur_start = i end
      cur_len = cur_len + 1
      if cur_len > best_len then best_start, best_len = cur_start, cur_len end
    else
      cur_len = 0
    end
  end
  local function part(a, b)
    local t = {}
    for i = a, b do t[#t + 1] = string.format("%x", g[i]) end
    return table.concat(t, ":")
  end
  if best_len > 1 then
    return part(1, best_start - 1) .. "::" .. part(best_start + best_len, 8)
  end
  return part(1, 8)
end

-- A native address of `n` bytes at `off` as mwdump shows it: MAC (6 bytes)
-- and UDP endpoint (6: IPv4:port, 18: [IPv6]:port).
local function native_udp(tvb, off, n)
  if n == 6 then
    return ipv4_text(tvb, off) .. ":" .. tvb(off + 4, 2):uint()
  elseif n == 18 then
    return "[" .. ipv6_text(tvb, off) .. "]:" .. tvb(off + 16, 2):uint()
  end
  return nil
end

local function add_native(tree, fs, tvb, off, n, hex_field)
  if n > 0 then tree:add(hex_field or fs.native, tvb(off, n)) end
  if n == 6 then tree:add(fs.mac, tvb(off, 6)) end
  local u = native_udp(tvb, off, n)
  if u then tree:add(fs.udp, tvb(off, n), u) end
end

-- One L2RH at `off` (whose bytes lie within `limit`); returns its total
-- length. `what` names it in faults.
local function dissect_l2rh(tvb, tree, fs, off, limit, what)
  if off + 2 > limit then fail(what .. ".len", "truncated: no room for the length field") end
  local l = tvb(off, 2):uint()
  if l == 0 or l > MAX_L2RH_CONTENT then
    local t = tree:add(fs.tree, tvb(off, 2))
    t:add(fs.len, tvb(off, 2))
    fail(what .. ".len", "L2RH length " .. l .. " (must be 1..63)")
  end
  local words = math.floor((l + 9) / 8)
  local total = words * 8
  if off + total > limit then
    fail(what, string.format("truncated: L2RH of %d bytes, %d left", total, limit - off))
  end
  local t = tree:add(fs.tree, tvb(off, total))
  t:add(fs.len, tvb(off, 2))
  t:add(fs.words, tvb(off, 2), words):set_generated()
  t:add(fs.content, tvb(off + 2, l))
  -- mwrouter's router hop (rrp::wire::RouterHop), where it has that shape.
  local summary = string.format("L=%d", l)
  if l >= 2 then
    local egress = tvb(off + 2, 2):uint()
    local n = l - 2
    if (egress == 0 or (egress >= 0x40 and egress <= 0x7FFF)) and (n == 0 or n == 6 or n == 18) then
      t:add(fs.egress, tvb(off + 2, 2))
      t:add(fs.native_len, tvb(off + 2, l), n):set_generated()
      add_native(t, fs, tvb, off + 4, n)
      t:add(fs.native_only, tvb(off + 2, 2), egress == 0):set_generated()
      t:add(fs.egress_only, tvb(off + 2, l), n == 0):set_generated()
      summary = string.format("egress 0x%04x", egress)
      local u = native_udp(tvb, off + 4, n)
      if n == 6 then
        summary = summary .. " native " .. tostring(tvb(off + 4, 6):ether()) .. " / " .. u
      elseif u then
        summary = summary .. " native " .. u
      end
    end
  end
  if total > 2 + l then t:add(fs.pad, tvb(off + 2 + l, total - 2 - l)) end
  t:append_text(": " .. summary)
  return total
end

local function bytes_to_printable(tvb, off, n)
  local out = {}
  for i = 0, n - 1 do
    local c = tvb(off + i, 1):uint()
    if c < 0x20 or c > 0x7E then return nil end
    out[#out + 1] = string.char(c)
  end
  return table.concat(out)
end

-- RRP records ---------------------------------------------------------------

-- Reads the record at `off` (data block ends at `limit`): checks as
-- rrp::wire::Record::new_checked and RecordRepr::parse do. Returns a table.
local function read_record(tvb, off, limit)
  if limit - off < 8 then
    fail("record", string.format("truncated: record needs 8 bytes, %d left", limit - off))
  end
  local rtyp = tvb(off, 1):uint()
  if rtyp < 1 or rtyp > 8 then fail("record.rtyp", "bad record type " .. rtyp) end
  local rl = tvb(off + 2, 2):uint()
  if rl == 0 then fail("record.rl", "bad record length 0") end
  local len = rl * 8
  if off + len > limit then
    fail("record.rl", string.format("truncated: record of %d bytes, %d left", len, limit - off))
  end
  local pl = tvb(off + 1, 1):uint()
  if pl > 7 or pl + 4 > len then fail("record.pl", "bad record pad length " .. pl) end
  local r = { off = off, rtyp = rtyp, pl = pl, rl = rl, len = len }
  local function fixed(words, want_pl, name)
    if rl ~= words then fail(name, "bad record length " .. rl) end
    if pl ~= want_pl then fail(name, "bad record pad length " .. pl) end
  end
  local function addr_list(node_only, name)
    local n = len - 4 - pl
    if n % 2 ~= 0 then fail(name, "odd length " .. n) end
    r.list = {}
    for i = 0, n / 2 - 1 do
      local a = tvb(off + 4 + 2 * i, 2):uint()
      if node_only and not (a >= 0x40 and a <= 0x7FFF) then
        fail(name, string.format("illegal address 0x%04x", a))
      end
      r.list[#r.list + 1] = a
    end
  end
  if rtyp == 1 then
    fixed(1, 2, "r1")
    r.address = tvb(off + 6, 2):uint()
    if r.address < 0x40 then fail("r1.address", string.format("illegal address 0x%04x", r.address)) end
  elseif rtyp == 3 then
    if len - 4 - pl < 1 then fail("r3.cc", "truncated: no capability code") end
  elseif rtyp == 4 then
    addr_list(false, "r4.address")
  elseif rtyp == 5 then
    if pl ~= 2 then fail("r5.pl", "bad record pad length " .. pl) end
    -- L2RHs, then optionally one R6 that ends the record.
    local p = off + 8
    r.route = {}
    while p < off + len do
      local first = tvb(p, 2):uint()
      if first < 0x40 then
        if first == 0 or first > MAX_L2RH_CONTENT then
          fail("l2rh.len", "L2RH length " .. first .. " (must be 1..63)")
        end
        local total = math.floor((first + 9) / 8) * 8
        if p + total > off + len then fail("r5.l2rh", "bad record length " .. rl) end
        r.route[#r.route + 1] = p
        p = p + total
      elseif tvb(p, 1):uint() == 6 then
        if off + len - p < 8 or tvb(p + 2, 2):uint() ~= 1 then fail("r6", "bad record length") end
        if tvb(p + 1, 1):uint() ~= 1 then fail("r6", "bad record pad length") end
        r.mtu_at = p
        p = p + 8
        if p ~= off + len then fail("r5", "trailing bytes") end
      else
        fail("r5.element", "unexpected record " .. tvb(p, 1):uint())
      end
    end
  elseif rtyp == 6 then
    fixed(1, 1, "r6")
    r.mtu_at = off
  elseif rtyp == 7 then
    addr_list(true, "r7.address")
  elseif rtyp == 8 then
    fixed(1, 0, "r8")
    local s = tvb(off + 4, 2):uint()
    if not (s >= 0x40 and s <= 0x7FFF) then fail("r8.san_id", string.format("illegal address 0x%04x", s)) end
  end
  return r
end

-- The role of every record (rrp::wire::Message::parse's grammar, mwdump's
-- roles). Returns a list of {role, node} or fails.
local function assign_roles(pt, te, recs)
  local roles = {}
  local i = 1
  local function peek() return recs[i] and recs[i].rtyp end
  local function take(t, role, node, name)
    local r = recs[i]
    if not r then fail(name, "missing record R" .. t) end
    if r.rtyp ~= t then fail(name, "unexpected record R" .. r.rtyp) end
    roles[i] = { role, node }
    i = i + 1
  end
  local function take_if(t, role, node)
    if peek() == t then roles[i] = { role, node }; i = i + 1; return true end
    return false
  end
  local function node_info(n, name)
    take(1, "address", n, name)
    take_if(2, "name", n)
    while take_if(3, "capability", n) do end
    take_if(4, "logical", n)
  end
  local function finish(name)
    if recs[i] then fail(name, "unexpected record R" .. recs[i].rtyp) end
  end
  if pt == 1 then
    if te == 1 then take(1, "addr", nil, "err.unk.r1")
    elseif te == 2 then take(1, "hr", nil, "err.hrdown.r1")
    elseif te == 3 then take(1, "a", nil, "err.linkdown.r1"); take(1, "b", nil, "err.linkdown.r1") end
    finish("err")
  elseif te == 1 then take(1, "dst", nil, "rrp1.r1")
  elseif te == 2 then
    take(1, "dst", nil, "rrp2.r1")
    take(5, "route", nil, "rrp2.r5")
    while take_if(5, "route", nil) do end
  elseif te == 3 then take(1, "dst", nil, "rrp3.r1"); take(1, "via", nil, "rrp3.r1")
  elseif te == 4 then
    local t = peek()
    if t == 1 or t == 2 then take(t, "query", nil, "rrp4")
    elseif t == 3 then while take_if(3, "query", nil) do end
    elseif t then fail("rrp4", "unexpected record R" .. t)
    else fail("rrp4", "missing record R1") end
  elseif te == 5 then
    local n = 0
    node_info(n, "rrp5.r1")
    while recs[i] do n = n + 1; node_info(n, "rrp5.r1") end
  elseif te == 6 then take(1, "dst", nil, "rrp6.r1")
  elseif te == 9 then
    take(8, "rt_header", nil, "rrp9.r8")
    take(5, "csr", nil, "rrp9.csr")
    take(7, "rcvf", nil, "rrp9.r7")
    local n = 0
    while recs[i] do
      node_info(n, "rrp9.node.r1")
      take(5, "route", n, "rrp9.node.r5")
      n = n + 1
    end
  end
  -- Records the grammar did not take (RRP#1/#3/#6 with more, RRP#7/#8
  -- with any) are what Message::parse ignores; mwdump calls them "extra".
  for j = i, #recs do roles[j] = { "extra", nil } end
  return roles
end

local function add_mtu(tree, tvb, at)
  local words = tvb(at + 5, 3):uint()
  tree:add(F.mtu, tvb(at + 5, 3))
  if words ~= 0 then tree:add(F.mtu_bytes, tvb(at + 5, 3), words * 8):set_generated() end
  tree:add(F.mtu_unlimited, tvb(at + 5, 3), words == 0):set_generated()
  return words
end

local RECORD_NAMES = {
  [1] = "address", [2] = "name", [3] = "capability", [4] = "logical addresses",
  [5] = "source route", [6] = "MTU", [7] = "RCVF", [8] = "RT header",
}

local function show_record(tvb, tree, r, role)
  local off, len, pl = r.off, r.len, r.pl
  local t = tree:add(F.record, tvb(off, len))
  t:set_text(string.format("R%d (%s), %s", r.rtyp, RECORD_NAMES[r.rtyp], role[1]))
  t:add(F.rtyp, tvb(off, 1))
  t:add(F.rtype, tvb(off, 1), "R" .. r.rtyp):set_generated()
  t:add(F.rpl, tvb(off + 1, 1))
  t:add(F.rl, tvb(off + 2, 2))
  t:add(F.role, tvb(off, len), role[1]):set_generated()
  if role[2] ~= nil then t:add(F.node, tvb(off, len), role[2]):set_generated() end
  local rtyp = r.rtyp
  if rtyp == 1 then
    t:add(F.address, tvb(off + 6, 2))
    t:add(F.address_class, tvb(off + 6, 2), addr_class(r.address)):set_generated()
    t:append_text(string.format(": 0x%04x", r.address))
  elseif rtyp == 2 then
    local n = len - 4 - pl
    if n > 0 then
      local s = bytes_to_printable(tvb, off + 4, n)
      if s then
        t:add(F.name, tvb(off + 4, n), s)
        t:append_text(": \"" .. s .. "\"")
      end
      t:add(F.name_bytes, tvb(off + 4, n))
    else
      t:add(F.name, tvb(off, len), ""):set_generated()
    end
  elseif rtyp == 3 then
    local n = len - 4 - pl
    local cc = tvb(off + 4, 1):uint()
    t:add(F.cc, tvb(off + 4, 1))
    if CAP_NAMES[cc] then t:add(F.cc_name, tvb(off + 4, 1), CAP_NAMES[cc]):set_generated() end
    if n > 1 then t:add(F.params, tvb(off + 5, n - 1)) end
    t:append_text(": " .. (CAP_NAMES[cc] or ("code " .. cc)))
  elseif rtyp == 4 or rtyp == 7 then
    local f = rtyp == 4 and F.logical or F.rcvf
    for k = 1, #r.list do t:add(f, tvb(off + 4 + 2 * (k - 1), 2)) end
  elseif rtyp == 5 then
    t:add(F.q, tvb(off + 6, 2))
    t:append_text(string.format(": Q %d, %d L2RH(s)", tvb(off + 6, 2):uint(), #r.route))
    for _, p in ipairs(r.route) do dissect_l2rh(tvb, t, R5_L2RH, p, off + len, "r5.l2rh") end
    if r.mtu_at then
      local m = t:add(F.record, tvb(r.mtu_at, 8))
      local w = add_mtu(m, tvb, r.mtu_at)
      m:set_text("R6 (MTU), nested: " .. (w == 0 and "unlimited" or (w * 8 .. " bytes")))
    end
  elseif rtyp == 6 then
    local w = add_mtu(t, tvb, off)
    t:append_text(": " .. (w == 0 and "unlimited" or (w * 8 .. " bytes")))
  elseif rtyp == 8 then
    t:add(F.san_id, tvb(off + 4, 2))
    t:add(F.sn, tvb(off + 6, 2))
    t:append_text(string.format(": SAN-ID 0x%04x, SN %d", tvb(off + 4, 2):uint(), tvb(off + 6, 2):uint()))
  end
  if pl > 0 then
    local pad_at = (rtyp == 1 or rtyp == 5 or rtyp == 6) and off + 4 or off + len - pl
    t:add(F.rpad, tvb(pad_at, pl))
  end
end

-- ERR GENERAL: the enclosed bytes read as far as they go (mwdump's
-- enclosed_info).
local function dissect_enclosed(tvb, tree, off, n)
  local t = tree
  t:add(F.enc_len, tvb(off, n > 0 and n or 0), n):set_generated()
  if n > 0 then t:add(F.enclosed, tvb(off, n)) end
  local e_end = off + n
  local p = off
  local note, at_header = nil, false
  local complete = false
  while true do
    if e_end - p < 2 then
      note = (n == 0) and "nothing enclosed" or "the enclosed bytes end before an EEP header"
      break
    end
    local first = tvb(p, 2):uint()
    if first >= 0x40 then at_header = true; break end
    if first == 0 or first > MAX_L2RH_CONTENT or p + math.floor((first + 9) / 8) * 8 > e_end then
      note = "a cut or bad L2RH in the enclosed bytes"
      break
    end
    p = p + dissect_l2rh(tvb, t, ENC_L2RH, p, e_end, "l2rh")
  end
  if at_header then
    if e_end - p < HEADER_LEN then
      note = "the enclosed bytes end inside the EEP header"
    else
      local pt, te = tvb(p + 4, 2):uint(), tvb(p + 6, 2):uint()
      t:add(F.enc_dst, tvb(p, 2))
      t:add(F.enc_pt, tvb(p + 4, 2))
      t:add(F.enc_te, tvb(p + 6, 2))
      t:add(F.enc_dl, tvb(p + 9, 3))
      t:add(F.enc_src, tvb(p + 12, 2))
      t:add(F.enc_kind, tvb(p, HEADER_LEN), kind_of(pt, te)):set_generated()
      local version, pl = tvb(p + 3, 1):uint(), tvb(p + 8, 1):uint() % 16
      local block = tvb(p + 9, 3):uint() * 8
      if version == 5 and pl <= 7 and pl <= block and e_end - p >= HEADER_LEN + block + TRAILER_LEN then
        complete = true
      else
        note = "the enclosed packet is cut or malformed"
      end
    end
  end
  t:add(F.enc_complete, tvb(off, n > 0 and n or 0), complete):set_generated()
  if note then t:add(F.enc_note, tvb(off, n > 0 and n or 0), note):set_generated() end
end

local function dissect_message(tvb, tree, pt, te, free, data_off, data_len)
  local name = type_name(pt, te)
  if not name then
    fail("eep.te", string.format("bad message type %d for %s", te, pt == 2 and "RRP" or "ERR"))
  end
  local t = tree:add(F.message, tvb(data_off, data_len > 0 and data_len or 0))
  local kind = kind_of(pt, te)
  t:set_text("Message: " .. kind)
  t:add(F.description, tvb(data_off, 0), pt == 2 and RRP_DESC[te] or ERR_DESC[te]):set_generated()
  if pt == 1 and te == 4 then
    dissect_enclosed(tvb, t, data_off, data_len)
    return
  end
  local recs = {}
  local p, limit = data_off, data_off + data_len
  while p < limit do
    local r = read_record(tvb, p, limit)
    recs[#recs + 1] = r
    p = p + r.len
  end
  local roles = assign_roles(pt, te, recs)
  for k, r in ipairs(recs) do show_record(tvb, t, r, roles[k]) end
  if pt == 2 and te == 9 then
    local index, count = bit.rshift(free, 8), bit.band(free, 0xFF)
    local valid = free == 0 or (index >= 1 and index <= count)
    if free == 0 then index, count = 1, 1 end
    t:add(F.part_index, tvb(data_off, 0), index):set_generated()
    t:add(F.part_count, tvb(data_off, 0), count):set_generated()
    t:add(F.part_valid, tvb(data_off, 0), valid):set_generated()
  end
end

-- Management datagrams ------------------------------------------------------

local function dissect_path(tvb, tree, fs, area, count, written)
  local p = 0
  local k = 0
  while k < count do
    if written then
      local rest_zero = true
      for i = p, 63 do if tvb(area + i, 1):uint() ~= 0 then rest_zero = false; break end end
      if rest_zero then break end
    end
    if p + 3 > 64 then fail("mad.path", "bad path: entry overruns the area") end
    local n = tvb(area + p + 2, 1):uint()
    if n > MAX_NATIVE_LEN then fail("mad.path", "bad path: native length " .. n) end
    if p + 3 + n > 64 then fail("mad.path", "bad path: entry overruns the area") end
    local t = tree:add(fs.tree, tvb(area + p, 3 + n))
    t:add(fs.hr, tvb(area + p, 2))
    t:add(fs.native_len, tvb(area + p + 2, 1))
    add_native(t, fs, tvb, area + p + 3, n)
    t:append_text(string.format(" %d: HR 0x%04x", k, tvb(area + p, 2):uint()))
    p = p + 3 + n
    k = k + 1
  end
end

local function dissect_attribute(tvb, tree, class, method, attr, area, area_len)
  -- A Get's attribute area carries nothing (mwdump does not decode it).
  if method == 0x01 then return end
  local name = attribute_name(class, attr)
  if name == "NodeDescription" then
    local last = -1
    for i = 0, 63 do if tvb(area + i, 1):uint() ~= 0 then last = i end end
    local s = last >= 0 and tvb(area, last + 1):string(ENC_UTF_8) or ""
    tree:add(ATTR.text, tvb(area, 64), s)
  elseif name == "NodeInfo" then
    tree:add(ATTR.base_version, tvb(area, 1))
    tree:add(ATTR.class_version, tvb(area + 1, 1))
    tree:add(ATTR.node_type, tvb(area + 2, 1))
    tree:add(ATTR.num_ports, tvb(area + 3, 1))
    tree:add(ATTR.system_image_identity, tvb(area + 4, 8))
    tree:add(ATTR.node_identity, tvb(area + 12, 8))
    tree:add(ATTR.port_identity, tvb(area + 20, 8))
    tree:add(ATTR.partition_cap, tvb(area + 28, 2))
    tree:add(ATTR.implementation_level, tvb(area + 30, 2))
    tree:add(ATTR.revision, tvb(area + 32, 4))
    tree:add(ATTR.local_port_num, tvb(area + 36, 1))
    tree:add(ATTR.vendor_id, tvb(area + 37, 3))
    tree:add(ATTR.local_port_address, tvb(area + 40, 2))
  elseif name == "PortInfo" then
    local n = tvb(area + 32, 1):uint()
    if n > MAX_NATIVE_LEN then fail("port_info.native_len", "bad native address length " .. n) end
    tree:add(ATTR.mkey, tvb(area, 8))
    tree:add(ATTR.address, tvb(area + 8, 2))
    tree:add(ATTR.san_id, tvb(area + 10, 2))
    tree:add(ATTR.manager_address, tvb(area + 12, 2))
    tree:add(ATTR.mkey_lease_period, tvb(area + 14, 2))
    tree:add(ATTR.mtu, tvb(area + 16, 4))
    tree:add(ATTR.cost, tvb(area + 20, 2))
    tree:add(ATTR.local_port_num, tvb(area + 22, 1))
    tree:add(ATTR.port_state, tvb(area + 23, 1))
    tree:add(ATTR.mkey_protect_bits, tvb(area + 24, 1))
    tree:add(ATTR.link_kind, tvb(area + 25, 1))
    tree:add(ATTR.mkey_violations, tvb(area + 26, 2))
    tree:add(ATTR.lrt_entries, tvb(area + 28, 2))
    tree:add(ATTR.buddies, tvb(area + 30, 2))
    tree:add(ATTR.native_len, tvb(area + 32, 1))
    if n > 0 then tree:add(ATTR.native_hex, tvb(area + 33, n)) end
    if n == 6 then tree:add(ATTR.native_mac, tvb(area + 33, 6)) end
    local u = native_udp(tvb, area + 33, n)
    if u then tree:add(ATTR.native_udp, tvb(area + 33, n), u) end
  end
end

local function dissect_mad(tvb, tree, off, data_len)
  if data_len ~= MAD_LEN then
    fail("eep.data", string.format("bad length %d: a MAD is 256 bytes", data_len))
  end
  local t = tree:add(F.mad, tvb(off, MAD_LEN))
  local base_version = tvb(off, 1):uint()
  t:add(F.mad_base_version, tvb(off, 1))
  if base_version ~= 1 then fail("mad.base_version", "bad BaseVersion " .. base_version) end
  local class = tvb(off + 1, 1):uint()
  local method = tvb(off + 3, 1):uint()
  local attr = tvb(off + 16, 2):uint()
  local dr = class == 0x81
  local status = tvb(off + 4, 2):uint()
  local hop_count = tvb(off + 7, 1):uint()
  if dr and hop_count > 8 then fail("mad.hop_count", "too many hops: " .. hop_count) end
  t:add(F.mad_class, tvb(off + 1, 1))
  if MAD_CLASSES[class] then t:add(F.mad_class_name, tvb(off + 1, 1), MAD_CLASSES[class]):set_generated() end
  t:add(F.mad_class_version, tvb(off + 2, 1))
  t:add(F.mad_response, tvb(off + 3, 1), method >= 0x80)
  t:add(F.mad_method, tvb(off + 3, 1))
  if MAD_METHODS[method] then
    t:add(F.mad_method_name, tvb(off + 3, 1), MAD_METHODS[method]):set_generated()
  end
  if dr then status = bit.band(status, 0x7FFF) end
  t:add(F.mad_status, tvb(off + 4, 2), status)
  t:add(F.mad_status_text, tvb(off + 4, 2), status_text(status)):set_generated()
  t:add(F.mad_tid, tvb(off + 8, 8))
  t:add(F.mad_attribute, tvb(off + 16, 2))
  local aname = attribute_name(class, attr)
  if aname then t:add(F.mad_attribute_name, tvb(off + 16, 2), aname):set_generated() end
  t:add(F.mad_modifier, tvb(off + 20, 4))
  t:add(F.mad_mkey, tvb(off + 24, 8))
  local area_len = (class == 0x01 or class == 0x81) and 64 or 192
  if dr then
    t:add(F.dr_returning, tvb(off + 4, 2), tvb(off + 4, 1):uint() >= 0x80)
    t:add(F.dr_hop_pointer, tvb(off + 6, 1))
    t:add(F.dr_hop_count, tvb(off + 7, 1))
    dissect_path(tvb, t, INITIAL_PATH, off + 128, hop_count, false)
    dissect_path(tvb, t, RETURN_PATH, off + 192, hop_count, true)
  end
  t:add(F.mad_attribute_data, tvb(off + 64, area_len))
  dissect_attribute(tvb, t, class, method, attr, off + 64, area_len)
  local info = string.format("%s %s %s", MAD_CLASSES[class] or string.format("class 0x%02x", class),
    MAD_METHODS[method] or string.format("method 0x%02x", method),
    aname or string.format("attribute 0x%04x", attr))
  t:append_text(": " .. info)
  return info
end

-- The packet ----------------------------------------------------------------

local function dissect_packet(tvb, pinfo, root)
  local len = tvb:len()
  local item = root:add(mw, tvb())
  local state = { item = item }
  local ok, err = pcall(function()
    -- Leading L2RHs.
    local off = 0
    local count = 0
    while true do
      if len - off < 2 then
        fail(count == 0 and "packet" or "l2rh", "truncated: the packet ends before an EEP header")
      end
      local first = tvb(off, 2):uint()
      if first >= 0x40 then break end
      off = off + dissect_l2rh(tvb, item, L2RH, off, len, "l2rh")
      count = count + 1
    end
    -- EEP header.
    if len - off < HEADER_LEN then
      fail("eep.header", string.format("truncated: EEP header needs 16 bytes, %d left", len - off))
    end
    local h = item:add(F.header, tvb(off, HEADER_LEN))
    local dst = tvb(off, 2):uint()
    local version = tvb(off + 3, 1):uint()
    local pt, te = tvb(off + 4, 2):uint(), tvb(off + 6, 2):uint()
    local e = bit.rshift(tvb(off + 8, 1):uint(), 4)
    local pl = bit.band(tvb(off + 8, 1):uint(), 0x0F)
    local dl = tvb(off + 9, 3):uint()
    local src = tvb(off + 12, 2):uint()
    local free = tvb(off + 14, 2):uint()
    h:add(F.dst, tvb(off, 2))
    h:add(F.dst_class, tvb(off, 2), addr_class(dst)):set_generated()
    h:add(F.priority, tvb(off + 2, 1))
    h:add(F.version, tvb(off + 3, 1))
    if version ~= 5 then fail("eep.version", "version " .. version .. ", expected 5") end
    h:add(F.pt, tvb(off + 4, 2))
    h:add(F.pt_class, tvb(off + 4, 2), pt_class(pt)):set_generated()
    h:add(F.te, tvb(off + 6, 2))
    local tn = type_name(pt, te)
    if tn then h:add(F.te_name, tvb(off + 6, 2), tn):set_generated() end
    h:add(F.e, tvb(off + 8, 1))
    h:add(F.little_endian, tvb(off + 8, 1), e >= 8):set_generated()
    local swap = ({ [0] = 8, [1] = 16, [2] = 32, [3] = 64, [4] = 128 })[e % 8]
    if swap then h:add(F.swap_bits, tvb(off + 8, 1), swap):set_generated() end
    h:add(F.pl, tvb(off + 8, 1))
    h:add(F.dl, tvb(off + 9, 3))
    h:add(F.src, tvb(off + 12, 2))
    h:add(F.src_class, tvb(off + 12, 2), addr_class(src)):set_generated()
    h:add(F.free, tvb(off + 14, 2))
    h:append_text(string.format(": 0x%04x -> 0x%04x, PT 0x%04x, TE %d, DL %d", src, dst, pt, te, dl))
    local block = dl * 8
    if pl > 7 or pl > block then fail("eep.pl", "bad pad length " .. pl) end
    local data_off = off + HEADER_LEN
    local data_len = block - pl
    if len - data_off < block then
      fail("eep.data", string.format("truncated: data block of %d bytes, %d left", block, len - data_off))
    end
    if len - data_off - block < TRAILER_LEN then
      fail("eep.trailer", string.format("truncated: trailer needs 8 bytes, %d left", len - data_off - block))
    end
    local packet_len = data_off + block + TRAILER_LEN
    state.packet_len = packet_len
    item:set_len(packet_len)
    local kind = kind_of(pt, te)
    item:add(F.kind, tvb(off, HEADER_LEN), kind):set_generated()
    item:add(F.packet_len, tvb(0, packet_len), packet_len):set_generated()
    item:add(F.data_len, tvb(data_off, block), data_len):set_generated()
    local info = string.format("%s 0x%04x -> 0x%04x", kind, src, dst)
    if count > 0 then info = info .. string.format(" (%d L2RH)", count) end
    -- Data block.
    if pt == 1 or pt == 2 then
      dissect_message(tvb, item, pt, te, free, data_off, data_len)
    else
      if data_len > 0 then item:add(F.data, tvb(data_off, data_len)) end
      if pt == 6 then
        info = info .. ": " .. dissect_mad(tvb, item, data_off, data_len)
      end
    end
    if pl > 0 then item:add(F.padding, tvb(data_off + data_len, pl)) end
    -- Trailer.
    local tr = item:add(F.trailer, tvb(data_off + block, TRAILER_LEN))
    tr:add(F.ei, tvb(data_off + block, TRAILER_LEN))
    -- Bytes of the frame after the packet (mwdump's padding_len counts
    -- from the frame).
    local frame_left = pinfo.caplen - tvb:offset() - packet_len
    if frame_left < 0 then frame_left = 0 end
    item:add(F.padding_len, tvb(0, packet_len), frame_left):set_generated()
    item:append_text(", " .. kind)
    pinfo.cols.info:set(info)
  end)
  if not ok then
    if getmetatable(err) == Malformed then
      item:add_proto_expert_info(ef_malformed, err.field .. ": " .. err.msg)
      pinfo.cols.info:set("[Malformed MessageWay: " .. err.field .. ": " .. err.msg .. "]")
    else
      item:add_proto_expert_info(ef_bug, tostring(err))
    end
    return len
  end
  return state.packet_len
end

function mw.dissector(tvb, pinfo, tree)
  pinfo.cols.protocol:set("MessageWay")
  return dissect_packet(tvb, pinfo, tree)
end

DissectorTable.get("ethertype"):add(0x88B5, mw)
DissectorTable.get("udp.port"):add(34997, mw)
do
  -- LINKTYPE_USER0 (147) is WTAP_ENCAP_USER0 (45) in Wireshark.
  local encaps = rawget(_G, "wtap_encaps") or rawget(_G, "wtap") or {}
  DissectorTable.get("wtap_encap"):add(encaps.USER0 or 45, mw)
end
