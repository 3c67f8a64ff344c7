/* ndt7_measure: an ndt7 measurement message from debitd's figures. */
#include "ndt7_measure.h"

#include <stdlib.h>

/* The spec's TCPInfo (Linux's tcp_info names as ndt-server's model.TCPInfo spells them),
 * in its units: times in microseconds, rates in bytes per second. */
static json_t *spec_tcpinfo(const struct tcp_info_sample *ti, uint64_t elapsed_us)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
                     "State", (json_int_t)ti->state, "CAState", (json_int_t)ti->ca_state,
                     "BusyTime", (json_int_t)ti->busy_time_us, "BytesAcked", (json_int_t)ti->bytes_acked,
                     "BytesReceived", (json_int_t)ti->bytes_received, "BytesSent", (json_int_t)ti->bytes_sent,
                     "BytesRetrans", (json_int_t)ti->bytes_retrans, "ElapsedTime", (json_int_t)elapsed_us,
                     "MinRTT", (json_int_t)ti->min_rtt_us, "RTT", (json_int_t)ti->rtt_us,
                     "RTTVar", (json_int_t)ti->rttvar_us, "RWndLimited", (json_int_t)ti->rwnd_limited_us,
                     "SndBufLimited", (json_int_t)ti->sndbuf_limited_us, "SndCwnd", (json_int_t)ti->snd_cwnd,
                     "SndMSS", (json_int_t)ti->snd_mss, "TotalRetrans", (json_int_t)ti->total_retrans,
                     "DeliveryRate", (json_int_t)(ti->delivery_rate_bps / 8),
                     "PacingRate", (json_int_t)(ti->pacing_rate_bps / 8));
}

json_t *ndt7_measurement(const struct ndt7_figures *f)
{
    json_t *m = json_pack("{s:{s:I, s:I}, s:s, s:s}", "AppInfo", "ElapsedTime", (json_int_t)f->elapsed_us,
                          "NumBytes", (json_int_t)f->num_bytes, "Origin", "server", "Test", f->test);
    if (!m)
        return NULL;
    if (f->uuid)
        json_object_set_new(m, "ConnectionInfo",
                            json_pack("{s:s, s:s, s:s, s:s}", "Client", f->client ? f->client : "", "Server",
                                      f->server ? f->server : "", "UUID", f->uuid, "StartTime",
                                      f->start_time ? f->start_time : ""));
    if (f->ti) {
        json_object_set_new(m, "TCPInfo", spec_tcpinfo(f->ti, f->elapsed_us));
        json_object_set_new(m, "DebitTCP", tcp_info_to_json(f->ti));
    }
    if (f->offload && f->offload[0])
        json_object_set_new(m, "DebitOffload", json_string(f->offload));
    if (f->ifname && f->ifname[0])
        json_object_set_new(m, "DebitInterface", json_string(f->ifname));
    return m;
}

char *ndt7_measurement_text(const struct ndt7_figures *f)
{
    json_t *m = ndt7_measurement(f);
    char *s = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    return s;
}
