import type { ContactField } from '../domain/contact-form/contact-form-fields.ts';
import type { ContactFormSettings } from '../domain/contact-form/contact-form-settings.ts';
import { escapeHtml } from '../html-escape.ts';
import type { IssuedChallenge } from './pow-challenge.ts';

/**
 * The hosted contact page (spec section 4.2: {contact_host}/{projectSlug}/{formSlug}) as HTML. Pure.
 *
 * Accessible without JavaScript: a plain POST form; every control has a label (a fieldset and legend for
 * radio and multiselect groups); required fields say so in words and with `required`; after a refused post
 * the page comes back with the values kept, an error summary (role=alert) linking to each field, and each
 * error next to its field, tied to it with aria-describedby and aria-invalid. The honeypot sits off-screen,
 * out of the tab order and hidden from assistive technology. The only script is inline (allowed by the
 * page's CSP nonce): it does the proof of work on submit, then posts the form as the browser would.
 */
export interface FormPageInput {
  form: ContactFormSettings;
  locale: string;
  /** Where the form posts (the page's own URL). */
  action: string;
  embed: boolean;
  nonce: string;
  challenge: IssuedChallenge;
  noJsMinSeconds: number;
  /** Values to show again after a refused post (as the browser sent them). */
  values?: Record<string, unknown>;
  /** Problems by field key. */
  fieldErrors?: Record<string, string>;
  /** A problem with the post as a whole (the challenge, the rate limit). */
  notice?: string | undefined;
}

const STRINGS = {
  en: {
    required: '(required)',
    submit: 'Send',
    problem: 'There is a problem',
    thanksTitle: 'Thank you',
    thanksBody: 'Your message has been sent.',
    sendAnother: 'Send another message',
    backTo: (site: string) => `Back to ${site}`,
    checking: 'Checking that you are not a robot…',
    sending: 'Sending…',
    noscript: (n: number) => (n > 0 ? `Without JavaScript, this form can be sent ${n} seconds after the page was opened (a spam check).` : 'This form needs JavaScript for its spam check. Please turn JavaScript on and reload the page.'),
    choose: 'Choose…',
    honeypot: 'Leave this field empty',
    error: 'Error:',
  },
  ja: {
    required: '（必須）',
    submit: '送信',
    problem: '入力内容を確認してください',
    thanksTitle: 'ありがとうございました',
    thanksBody: 'メッセージを送信しました。',
    sendAnother: '別のメッセージを送信する',
    backTo: (site: string) => `${site} に戻る`,
    checking: 'ロボットでないことを確認しています…',
    sending: '送信しています…',
    noscript: (n: number) => (n > 0 ? `JavaScript が無効な場合、このフォームはページを開いてから ${n} 秒後に送信できます（スパム対策）。` : 'このフォームのスパム対策には JavaScript が必要です。JavaScript を有効にしてページを再読み込みしてください。'),
    choose: '選択してください',
    honeypot: 'この欄は空のままにしてください',
    error: 'エラー:',
  },
};
type Strings = (typeof STRINGS)['en'];

export function uiStrings(locale: string): Strings {
  return (STRINGS as Record<string, Strings>)[locale.split('-')[0]!] ?? STRINGS.en;
}

/** Messages for refusals of a post as a whole. */
export function challengeMessage(reason: string, locale: string, retryAfterSeconds?: number): string {
  const ja = locale.split('-')[0] === 'ja';
  switch (reason) {
    case 'too-early':
      return ja ? `スパム対策のため、あと ${retryAfterSeconds ?? 1} 秒待ってからもう一度送信してください。` : `Please wait ${retryAfterSeconds ?? 1} more seconds, then send the form again (the spam check without JavaScript).`;
    case 'javascript-required':
      return ja ? 'このフォームのスパム対策には JavaScript が必要です。' : 'This form needs JavaScript for its spam check. Please turn JavaScript on and send the form again.';
    case 'expired':
      return ja ? 'ページの有効期限が切れました。もう一度送信してください。' : 'The page had expired. Please send the form again.';
    case 'rate-limited':
      return ja ? `送信が多すぎます。${retryAfterSeconds ?? 60} 秒後にもう一度お試しください。` : `Too many messages from your address. Please try again in ${retryAfterSeconds ?? 60} seconds.`;
    default:
      return ja ? 'スパム対策の確認に失敗しました。もう一度送信してください。' : 'The spam check did not pass (the page was outdated or already sent). Please send the form again.';
  }
}

export function renderFormPage(input: FormPageInput): string {
  const t = uiStrings(input.locale);
  const { form } = input;
  const errors = input.fieldErrors ?? {};
  const values = input.values ?? {};
  const errorKeys = form.fields.filter((f) => errors[f.key]).map((f) => f.key);
  const summary =
    errorKeys.length || input.notice
      ? `<div class="summary" role="alert" id="error-summary" tabindex="-1"><h2>${escapeHtml(t.problem)}</h2>${input.notice ? `<p>${escapeHtml(input.notice)}</p>` : ''}${
          errorKeys.length ? `<ul>${errorKeys.map((k) => `<li><a href="#${controlId(form.fields.find((f) => f.key === k)!)}">${escapeHtml(form.fields.find((f) => f.key === k)!.label)}: ${escapeHtml(errors[k]!)}</a></li>`).join('')}</ul>` : ''
        }</div>`
      : '';
  const honeypot = form.honeypot_enabled
    ? `<div class="hp" aria-hidden="true"><label for="f-hp">${escapeHtml(t.honeypot)}</label><input id="f-hp" name="${escapeHtml(form.honeypot_field)}" type="text" tabindex="-1" autocomplete="off" value=""></div>`
    : '';
  const body = `<main>
<h1>${escapeHtml(form.name)}</h1>
${summary}
<form id="contact-form" method="post" action="${escapeHtml(input.action)}" novalidate data-pow-token="${escapeHtml(input.challenge.token)}" data-pow-difficulty="${input.challenge.difficulty}">
<input type="hidden" name="_challenge" value="${escapeHtml(input.challenge.token)}">
<input type="hidden" name="_pow" value="">
<input type="hidden" name="_locale" value="${escapeHtml(input.locale)}">
${form.fields.map((f) => renderField(f, values[f.key], errors[f.key], t)).join('\n')}
${honeypot}
<p id="pow-status" class="status" role="status" aria-live="polite"></p>
<button type="submit">${escapeHtml(t.submit)}</button>
</form>
<noscript><p class="note">${escapeHtml(t.noscript(input.noJsMinSeconds))}</p></noscript>
</main>
<script nonce="${input.nonce}">${solverScript(t)}</script>`;
  return document(input.locale, form.name, input.embed, input.nonce, body);
}

/**
 * The page after a message was sent. `again` is the form page's URL (a link to send another message);
 * `site` the project's site (its settings' URL and name), linked as the way back, outside an embed (where
 * the page around the frame is the site).
 */
export function renderThanksPage(input: { form: ContactFormSettings; locale: string; embed: boolean; nonce: string; again?: string; site?: { url: string; name: string | null } }): string {
  const t = uiStrings(input.locale);
  const links = [
    input.again ? `<a href="${escapeHtml(input.again)}">${escapeHtml(t.sendAnother)}</a>` : '',
    input.site && !input.embed ? `<a href="${escapeHtml(input.site.url)}">${escapeHtml(t.backTo(input.site.name ?? siteHost(input.site.url)))}</a>` : '',
  ].filter(Boolean);
  return document(input.locale, input.form.name, input.embed, input.nonce, `<main>
<h1>${escapeHtml(input.form.name)}</h1>
<div class="thanks" role="status" id="thank-you"><h2>${escapeHtml(t.thanksTitle)}</h2><p>${escapeHtml(t.thanksBody)}</p></div>
${links.length ? `<nav class="next" aria-label="${escapeHtml(t.thanksTitle)}"><ul>${links.map((link) => `<li>${link}</li>`).join('')}</ul></nav>` : ''}
</main>`);
}

/** A site URL's host, to name a site that has no name. */
function siteHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function renderErrorPage(input: { title: string; message: string; locale: string; nonce: string; embed?: boolean }): string {
  return document(input.locale, input.title, input.embed ?? false, input.nonce, `<main><h1>${escapeHtml(input.title)}</h1><p>${escapeHtml(input.message)}</p></main>`);
}

/** The id of a field's first control (what labels and the error summary point at). */
function controlId(field: ContactField): string {
  return field.type === 'radio' || field.type === 'multiselect' ? `f-${field.key}-0` : `f-${field.key}`;
}

function renderField(field: ContactField, value: unknown, error: string | undefined, t: Strings): string {
  const id = `f-${field.key}`;
  const errorId = `${id}-error`;
  const helpId = `${id}-help`;
  const describedBy = [error ? errorId : null, field.help ? helpId : null].filter(Boolean).join(' ');
  const aria = `${describedBy ? ` aria-describedby="${describedBy}"` : ''}${error ? ' aria-invalid="true"' : ''}`;
  const required = field.required ? ' required aria-required="true"' : '';
  const labelText = `${escapeHtml(field.label)}${field.required ? ` <span class="req">${escapeHtml(t.required)}</span>` : ''}`;
  const help = field.help ? `<p class="help" id="${helpId}">${escapeHtml(field.help)}</p>` : '';
  const errorLine = error ? `<p class="error" id="${errorId}"><span class="visually-hidden">${escapeHtml(t.error)} </span>${escapeHtml(error)}</p>` : '';
  const text = typeof value === 'string' ? value : Array.isArray(value) ? String(value[0] ?? '') : value === undefined || value === null ? '' : String(value);
  const chosen = new Set(Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : []);
  const placeholder = field.placeholder ? ` placeholder="${escapeHtml(field.placeholder)}"` : '';
  const maxLength = field.limits?.maxLength ? ` maxlength="${field.limits.maxLength}"` : '';
  switch (field.type) {
    case 'textarea':
      return `<div class="field${error ? ' invalid' : ''}"><label for="${id}">${labelText}</label>${help}${errorLine}<textarea id="${id}" name="${field.key}" rows="6"${required}${aria}${placeholder}${maxLength}>${escapeHtml(text)}</textarea></div>`;
    case 'select':
      return `<div class="field${error ? ' invalid' : ''}"><label for="${id}">${labelText}</label>${help}${errorLine}<select id="${id}" name="${field.key}"${required}${aria}><option value="">${escapeHtml(t.choose)}</option>${(field.options ?? []).map((o) => `<option value="${escapeHtml(o.value)}"${chosen.has(o.value) ? ' selected' : ''}>${escapeHtml(o.label)}</option>`).join('')}</select></div>`;
    case 'radio':
    case 'multiselect': {
      const type = field.type === 'radio' ? 'radio' : 'checkbox';
      const options = (field.options ?? [])
        .map((o, i) => `<div class="choice"><input type="${type}" id="${id}-${i}" name="${field.key}" value="${escapeHtml(o.value)}"${chosen.has(o.value) ? ' checked' : ''}${field.type === 'radio' && field.required ? ' required' : ''}><label for="${id}-${i}">${escapeHtml(o.label)}</label></div>`)
        .join('');
      return `<fieldset class="field${error ? ' invalid' : ''}"${aria}><legend>${labelText}</legend>${help}${errorLine}${options}</fieldset>`;
    }
    case 'checkbox':
    case 'boolean': {
      const checked = value === true || value === 'true' || value === 'on';
      return `<div class="field tick${error ? ' invalid' : ''}">${help}${errorLine}<input type="checkbox" id="${id}" name="${field.key}" value="true"${checked ? ' checked' : ''}${required}${aria}><label for="${id}">${labelText}</label></div>`;
    }
    default: {
      const type = field.type === 'text' ? 'text' : field.type;
      const autocomplete = field.type === 'email' ? ' autocomplete="email"' : field.type === 'tel' ? ' autocomplete="tel"' : field.type === 'url' ? ' autocomplete="url"' : field.key === 'name' ? ' autocomplete="name"' : '';
      const numberLimits = field.type === 'number' ? `${field.limits?.min !== undefined ? ` min="${field.limits.min}"` : ''}${field.limits?.max !== undefined ? ` max="${field.limits.max}"` : ''}${field.limits?.integer ? ' step="1"' : ' step="any"'}` : '';
      return `<div class="field${error ? ' invalid' : ''}"><label for="${id}">${labelText}</label>${help}${errorLine}<input type="${type}" id="${id}" name="${field.key}" value="${escapeHtml(text)}"${required}${aria}${placeholder}${maxLength}${numberLimits}${autocomplete}></div>`;
    }
  }
}

const STYLE = `body{font-family:system-ui,sans-serif;line-height:1.5;margin:0;padding:1.5rem;color:#1a1a1a;background:#fff}
main{max-width:40rem;margin:0 auto}
body.embed{padding:0.75rem}
.field{margin:0 0 1.25rem;border:0;padding:0}
label,legend{display:block;font-weight:600;margin-bottom:0.25rem}
.tick label,.choice label{display:inline;font-weight:400;margin-left:0.4rem}
input[type=text],input[type=email],input[type=url],input[type=tel],input[type=number],input[type=date],select,textarea{width:100%;box-sizing:border-box;padding:0.5rem;border:1px solid #555;border-radius:4px;font:inherit}
:focus{outline:3px solid #1d70b8;outline-offset:2px}
.invalid input,.invalid select,.invalid textarea{border:2px solid #b00020}
.error{color:#b00020;font-weight:600;margin:0 0 0.25rem}
.help{color:#444;margin:0 0 0.25rem;font-size:0.95em}
.summary{border:3px solid #b00020;padding:0.75rem 1rem;margin-bottom:1.5rem}
.summary h2{margin-top:0;font-size:1.1em}
.summary a{color:#b00020}
.thanks{border:3px solid #00703c;padding:0.75rem 1rem}
.next ul{list-style:none;margin:1.25rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:0.5rem 1.5rem}
.next a{color:#1d70b8}
button{font:inherit;padding:0.6rem 1.4rem;background:#1d70b8;color:#fff;border:0;border-radius:4px;cursor:pointer}
button[disabled]{opacity:0.6}
.hp{position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.req{font-weight:400;color:#444}`;

function document(locale: string, title: string, embed: boolean, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body${embed ? ' class="embed"' : ''}>
${body}
</body>
</html>
`;
}

/** The inline solver: SHA-256 in plain JavaScript (no secure context needed), run in slices so the page stays responsive. */
function solverScript(t: Strings): string {
  return `(function(){
var K=[1116352408,1899447441,3049323471,3921009573,961987163,1508970993,2453635748,2870763221,3624381080,310598401,607225278,1426881987,1925078388,2162078206,2614888103,3248222580,3835390401,4022224774,264347078,604807628,770255983,1249150122,1555081692,1996064986,2554220882,2821834349,2952996808,3210313671,3336571891,3584528711,113926993,338241895,666307205,773529912,1294757372,1396182291,1695183700,1986661051,2177026350,2456956037,2730485921,2820302411,3259730800,3345764771,3516065817,3600352804,4094571909,275423344,430227734,506948616,659060556,883997877,958139571,1322822218,1537002063,1747873779,1955562222,2024104815,2227730452,2361852424,2428436474,2756734187,3204031479,3329325298];
var W=new Int32Array(64);
function sha(s){var l=s.length,n=((l+72)>>6)<<6,m=new Uint8Array(n),i,t;for(i=0;i<l;i++)m[i]=s.charCodeAt(i)&255;m[l]=128;var b=l*8;m[n-4]=b>>>24;m[n-3]=(b>>>16)&255;m[n-2]=(b>>>8)&255;m[n-1]=b&255;
var H=[1779033703,-1150833019,1013904242,-1521486534,1359893119,-1694144372,528734635,1541459225];
for(i=0;i<n;i+=64){for(t=0;t<16;t++)W[t]=(m[i+4*t]<<24)|(m[i+4*t+1]<<16)|(m[i+4*t+2]<<8)|m[i+4*t+3];
for(t=16;t<64;t++){var x=W[t-15],y=W[t-2];W[t]=(W[t-16]+(((x>>>7)|(x<<25))^((x>>>18)|(x<<14))^(x>>>3))+W[t-7]+(((y>>>17)|(y<<15))^((y>>>19)|(y<<13))^(y>>>10)))|0;}
var a=H[0],b2=H[1],c=H[2],d=H[3],e=H[4],f=H[5],g=H[6],h=H[7];
for(t=0;t<64;t++){var t1=(h+(((e>>>6)|(e<<26))^((e>>>11)|(e<<21))^((e>>>25)|(e<<7)))+((e&f)^(~e&g))+K[t]+W[t])|0;var t2=((((a>>>2)|(a<<30))^((a>>>13)|(a<<19))^((a>>>22)|(a<<10)))+((a&b2)^(a&c)^(b2&c)))|0;h=g;g=f;f=e;e=(d+t1)|0;d=c;c=b2;b2=a;a=(t1+t2)|0;}
H[0]=(H[0]+a)|0;H[1]=(H[1]+b2)|0;H[2]=(H[2]+c)|0;H[3]=(H[3]+d)|0;H[4]=(H[4]+e)|0;H[5]=(H[5]+f)|0;H[6]=(H[6]+g)|0;H[7]=(H[7]+h)|0;}
return H;}
function zeros(H){var z=0;for(var i=0;i<8;i++){var w=H[i]>>>0;if(w===0){z+=32;continue;}return z+Math.clz32(w);}return z;}
var form=document.getElementById('contact-form');if(!form)return;
var status=document.getElementById('pow-status');
var summary=document.getElementById('error-summary');if(summary)summary.focus();
form.addEventListener('submit',function(ev){
var pow=form.elements.namedItem('_pow');if(pow.value)return;
ev.preventDefault();
var button=form.querySelector('button[type=submit]');if(button)button.disabled=true;
status.textContent=${JSON.stringify(t.checking)};
var token=form.getAttribute('data-pow-token'),d=+form.getAttribute('data-pow-difficulty'),c=0,prefix=token+':';
(function step(){var end=c+4000;for(;c<end;c++){if(zeros(sha(prefix+c))>=d){pow.value=String(c);status.textContent=${JSON.stringify(t.sending)};form.submit();return;}}setTimeout(step,0);})();
});
})();`;
}
