import QRCode from 'qrcode';

/*
 * A ticket's QR code carries its signed token verbatim: the scanner needs nothing else to check it
 * offline. Error correction M: a ~500-character EdDSA token stays a version a phone camera or a door
 * scanner reads comfortably, and survives a creased printout.
 */
const OPTIONS = { errorCorrectionLevel: 'M' as const, margin: 4 };

export function qrSvg(token: string): Promise<string> {
  return QRCode.toString(token, { ...OPTIONS, type: 'svg' });
}

export function qrPng(token: string): Promise<Buffer> {
  return QRCode.toBuffer(token, { ...OPTIONS, type: 'png', scale: 4 });
}

/** The module grid (true = dark), row by row, for drawing the code as vector squares in the PDF. */
export function qrModules(token: string): { size: number; dark(x: number, y: number): boolean } {
  const { modules } = QRCode.create(token, OPTIONS);
  return { size: modules.size, dark: (x, y) => Boolean(modules.get(y, x)) };
}
